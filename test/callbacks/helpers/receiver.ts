import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawBody: Buffer;
  /** Extra data the test attaches (e.g. virtual time of the Temporal test server). */
  at?: number;
}

export interface Reply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/** A real HTTP listener on 127.0.0.1 that records every request and answers with `reply(n)` (n = 0-based). */
export async function startReceiver(
  reply: (n: number, req: Recorded) => Reply | Promise<Reply> = () => ({ status: 200, body: 'ok' }),
  stamp?: () => Promise<number>,
) {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const rec: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawBody: Buffer.concat(chunks) };
        if (stamp) rec.at = await stamp();
        const n = requests.length;
        requests.push(rec);
        const r = await reply(n, rec);
        res.writeHead(r.status, { 'content-type': 'text/plain', ...r.headers });
        res.end(r.body ?? '');
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path = '/cb') => `http://127.0.0.1:${port}${path}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The callback's fields as the merchant reads them: the query of a GET, else the JSON or form body. */
export function fieldsOf(r: Recorded): Record<string, unknown> {
  if (r.method === 'GET') return Object.fromEntries(new URLSearchParams(r.url.split('?')[1]));
  if (r.headers['content-type'] === 'application/json') return JSON.parse(r.rawBody.toString()) as Record<string, unknown>;
  return Object.fromEntries(new URLSearchParams(r.rawBody.toString()));
}
