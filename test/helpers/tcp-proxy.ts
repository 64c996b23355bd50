import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 to a local port, for a connection that breaks (a node's WebSocket feed, a
 * database): `cut()` closes every connection through it; `down(true)` also refuses new ones until
 * `down(false)`.
 */
export async function tcpProxy(upstreamPort: number): Promise<{ port: number; cut(): void; down(on: boolean): void; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let isDown = false;
  const cut = () => sockets.forEach((s) => s.destroy());
  const server = net.createServer((client) => {
    if (isDown) return void client.destroy();
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    down(on) {
      isDown = on;
      if (on) cut();
    },
    close: () => (cut(), new Promise<void>((r) => server.close(() => r()))),
  };
}
