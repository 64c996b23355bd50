import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * Counting relays for bench/pipeline.ts --costs: what the gateway's processes ask of the chain nodes and of
 * their own PostgreSQL database, counted on the wire between them (the bench's own calls go around them).
 * Both relay every byte unchanged.
 */

/** A JSON-RPC node behind an HTTP relay on 127.0.0.1 that counts calls per method (a batch counts each call). */
export interface RpcCounter {
  /** `upstream` with the relay's host and port (credentials and path kept). */
  url: string;
  /** Calls so far by method, and HTTP requests (a batch is one). */
  snapshot(): { calls: Record<string, number>; requests: number };
  close(): Promise<void>;
}

export async function startRpcCounter(upstream: string): Promise<RpcCounter> {
  const up = new URL(upstream);
  const calls: Record<string, number> = {};
  let requests = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests++;
      try {
        const asked = JSON.parse(body.toString('utf8')) as { method?: string } | Array<{ method?: string }>;
        for (const r of Array.isArray(asked) ? asked : [asked]) if (r?.method) calls[r.method] = (calls[r.method] ?? 0) + 1;
      } catch {
        calls['(not JSON)'] = (calls['(not JSON)'] ?? 0) + 1;
      }
      const headers = { ...req.headers, host: up.host, 'content-length': String(body.length) };
      const out = http.request({ host: up.hostname, port: up.port, path: req.url, method: req.method, headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const url = new URL(upstream);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: upstream.endsWith('/') || up.pathname !== '/' ? url.toString() : url.toString().replace(/\/$/, ''),
    snapshot: () => ({ calls: { ...calls }, requests }),
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * A TCP relay in front of PostgreSQL that reads the frontend messages of the wire protocol (v3) as they
 * pass: a round trip is a message the client then waits on, Sync (the end of an extended-protocol
 * query: node-postgres sends Parse/Bind/Describe/Execute/Sync together) or a simple Query; a statement
 * is an Execute or a simple Query (a simple Query holding several statements counts as one). Both are
 * also counted per SQL text (whitespace collapsed, 160 characters), so that the statements a deposit
 * causes can be told from the ones that run at rest.
 */
export interface PgCounter {
  url: string;
  snapshot(): PgCounts;
  close(): Promise<void>;
}

export interface PgCounts {
  statements: number;
  roundTrips: number;
  connections: number;
  /** Per SQL text: statements, and round trips (a Sync counts for the text it ended). */
  bySql?: Record<string, { statements: number; roundTrips: number }>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

export async function startPgCounter(upstream: string): Promise<PgCounter> {
  const up = new URL(upstream);
  const counts: PgCounts = { statements: 0, roundTrips: 0, connections: 0 };
  const bySql = new Map<string, { statements: number; roundTrips: number }>();
  const tally = (sql: string, statements: number, roundTrips: number) => {
    const t = bySql.get(sql) ?? { statements: 0, roundTrips: 0 };
    t.statements += statements;
    t.roundTrips += roundTrips;
    bySql.set(sql, t);
  };
  const text = (b: Buffer, from: number) => {
    const end = b.indexOf(0, from);
    return { s: b.toString('utf8', from, end < 0 ? b.length : end), next: end + 1 };
  };
  const norm = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 160);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    counts.connections++;
    const server = net.connect(Number(up.port || 5432), up.hostname);
    sockets.add(client).add(server);
    const end = () => {
      client.destroy();
      server.destroy();
      sockets.delete(client);
      sockets.delete(server);
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
    server.pipe(client);
    let pending: Buffer = Buffer.alloc(0);
    // Until the startup message, frames have no type byte (SSL/GSS requests come first and are refused by
    // a server without them, after which the startup message follows).
    let startup = true;
    /** Prepared statements of this connection by name ('' the unnamed one), and what the last Bind/Execute ran. */
    const prepared = new Map<string, string>();
    let bound = '';
    let last = '';
    client.on('data', (chunk: Buffer) => {
      server.write(chunk);
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      for (;;) {
        if (startup) {
          if (pending.length < 8) break;
          const len = pending.readInt32BE(0);
          if (pending.length < len) break;
          const code = pending.readInt32BE(4);
          if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) startup = false;
          pending = pending.subarray(len);
          continue;
        }
        if (pending.length < 5) break;
        const type = String.fromCharCode(pending[0]);
        const len = pending.readInt32BE(1);
        if (pending.length < len + 1) break;
        const body = pending.subarray(5, len + 1);
        if (type === 'Q') {
          counts.statements++;
          counts.roundTrips++;
          tally(norm(text(body, 0).s), 1, 1);
        } else if (type === 'P') {
          const name = text(body, 0);
          prepared.set(name.s, norm(text(body, name.next).s));
        } else if (type === 'B') {
          const portal = text(body, 0);
          bound = prepared.get(text(body, portal.next).s) ?? '(unknown)';
        } else if (type === 'E') {
          counts.statements++;
          last = bound;
          tally(last, 1, 0);
        } else if (type === 'S') {
          counts.roundTrips++;
          tally(last, 0, 1);
        }
        pending = pending.subarray(len + 1);
      }
      if (pending.length === 0) pending = Buffer.alloc(0);
      else pending = Buffer.from(pending);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(upstream);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    snapshot: () => ({ ...counts, bySql: Object.fromEntries([...bySql].map(([k, v]) => [k, { ...v }])) }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
