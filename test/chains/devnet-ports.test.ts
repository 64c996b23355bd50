import fs from 'node:fs';
import net from 'node:net';
import * as devserver from '../../devnet/devserver';
import { startAnvil } from '../../devnet/anvil';
import { startLitecoind } from '../../devnet/litecoind';
import { jsonRpc } from '../../src/chains/json-rpc';
import { BitcoinRpc } from '../../src/chains/utxo/rpc';
import { tmpDir } from '../helpers/nodes';

/**
 * A free port is only free when it is looked up: another process may bind it before the node does (CI
 * runs lost a devnet start that way). The node is then started again on new ports. In each case below the
 * first port handed out (the first start's RPC port) is one another process holds.
 */
async function withTakenFirstPort(run: (taken: number, calls: () => number) => Promise<void>): Promise<void> {
  // It accepts connections and never answers, as a port's other holder may.
  const held = new Set<net.Socket>();
  const squatter = net.createServer((socket) => held.add(socket));
  await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
  const taken = (squatter.address() as net.AddressInfo).port;
  const real = devserver.freePort;
  let calls = 0;
  const spy = jest.spyOn(devserver, 'freePort').mockImplementation((host: string, preferred?: number) => (++calls === 1 ? Promise.resolve(taken) : real(host, preferred)));
  try {
    await run(taken, () => calls);
  } finally {
    spy.mockRestore();
    for (const socket of held) socket.destroy();
    squatter.close();
  }
}

it('freePort picks below the ephemeral range, where bind(0) and outgoing connections take their ports', async () => {
  const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  // Preferred 0 ("any port", as the tests and benches start the dev server) is no exception: the kernel's own
  // pick came from that range, where the dev server's internal services then took the frontend's port (CI).
  const ports = await Promise.all(Array.from({ length: 20 }, (_, i) => devserver.freePort('127.0.0.1', i % 2 === 0 ? undefined : 0)));
  for (const port of ports) {
    expect(port).toBeGreaterThanOrEqual(10_000);
    expect(port).toBeLessThan(low);
  }
  // A preferred port that is free is the one handed out.
  const preferred = ports[0];
  expect(await devserver.freePort('127.0.0.1', preferred)).toBe(preferred);
});

it('a Core node whose RPC port was taken before it could bind it starts again on new ports', async () => {
  await withTakenFirstPort(async (taken, calls) => {
    const node = await startLitecoind({ dir: tmpDir('gw-core-ports-') });
    try {
      expect(new URL(node.rpcUrl).port).not.toBe(String(taken));
      expect(await new BitcoinRpc(node.rpcUrl).call<number>('getblockcount')).toBeGreaterThanOrEqual(101);
      expect(calls()).toBeGreaterThanOrEqual(3); // two ports for the lost start, then new ones
    } finally {
      await node.stop();
    }
  });
}, 120_000);

it('anvil whose port was taken before it could bind it starts again on a new port', async () => {
  await withTakenFirstPort(async (taken, calls) => {
    const node = await startAnvil({ dir: tmpDir('gw-anvil-ports-') });
    try {
      expect(new URL(node.rpcUrl).port).not.toBe(String(taken));
      expect(calls()).toBe(2);
      // The second start is whole: its test token was deployed.
      expect(await jsonRpc<string>(node.rpcUrl, 'eth_getCode', [node.tokens.erc20_usdt, 'latest'])).not.toBe('0x');
    } finally {
      await node.stop();
    }
  });
}, 120_000);

it("freePort never picks at random a port this process reserved for itself (npm start's API, UI and metrics ports)", async () => {
  const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  // Every port of the range it picks from but one: before reservePorts, a pick was almost surely one of them.
  const all = Array.from({ length: low - 10_000 }, (_, i) => 10_000 + i);
  const release = devserver.reservePorts(...all.slice(1));
  try {
    const reserved = new Set(all.slice(1));
    const ports = await Promise.all(Array.from({ length: 10 }, () => devserver.freePort('127.0.0.1')));
    for (const port of ports) expect(reserved.has(port)).toBe(false);
    // A port asked for by name is still given.
    expect(await devserver.freePort('127.0.0.1', all[all.length - 1])).toBe(all[all.length - 1]);
  } finally {
    release();
  }
});
