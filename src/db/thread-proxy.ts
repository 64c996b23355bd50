import type { MessagePort } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pg-proxy';
import type { Database, Db } from './client';
import * as schema from './schema';

/**
 * The embedded default's API runs in a thread of its own (src/runtime/api-thread.ts), while PGlite, which
 * one thread owns, stays with the worker. The API's statements cross a MessagePort, each one a single
 * statement run whole on the owner's PGlite (the API path has no multi-statement transaction: a create
 * is one statement, src/db/queries/create-config.ts). Results come back exactly as drizzle's PGlite
 * driver would read them, so the query code above never knows.
 */
export type Method = 'all' | 'execute';

interface Request {
  id: number;
  sql: string;
  params: unknown[];
  method: Method;
}

/** A PostgreSQL error's fields (code, constraint, …) survive the crossing; the callers branch on them. */
type ErrorFields = Record<string, unknown> & { message: string };
type Reply = { id: number; rows: unknown } | { id: number; error: ErrorFields };

const same = (v: string) => v;
/**
 * As drizzle-orm/pglite reads them: dates, times and intervals stay text. By PostgreSQL's type OIDs, not
 * PGlite's `types`: the API thread loads this module and none of PGlite's JavaScript.
 */
const PARSERS = {
  1114: same, // timestamp
  1184: same, // timestamptz
  1186: same, // interval
  1082: same, // date
  1231: same, // numeric[]
  1115: same, // timestamp[]
  1185: same, // timestamptz[]
  1187: same, // interval[]
  1182: same, // date[]
};

function fieldsOf(e: unknown): ErrorFields {
  if (!(e instanceof Error)) return { message: String(e) };
  const out: ErrorFields = { message: e.message, name: e.name };
  for (const [k, v] of Object.entries(e)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'object') continue;
    out[k] = v;
  }
  return out;
}

/** The owner's side: runs each statement that arrives on `port` and answers with its rows or its error. */
export function serveQueries(client: PGlite, port: MessagePort): void {
  port.on('message', (m: Request) => {
    client
      .query(m.sql, m.params, { rowMode: m.method === 'all' ? 'array' : 'object', parsers: PARSERS })
      .then(
        (r) => port.postMessage({ id: m.id, rows: m.method === 'all' ? r.rows : { rows: r.rows, affectedRows: r.affectedRows, fields: r.fields } } satisfies Reply),
        (e: unknown) => port.postMessage({ id: m.id, error: fieldsOf(e) } satisfies Reply),
      );
  });
}

export class ProxyClosedError extends Error {
  constructor() {
    super('the database owner thread has closed');
    this.name = 'ProxyClosedError';
  }
}

/** The API thread's side: a drizzle database whose statements run on the owner's PGlite. */
export function proxiedDatabase(port: MessagePort): Database {
  const waiting = new Map<number, { resolve(v: { rows: unknown[] }): void; reject(e: Error): void }>();
  let next = 0;
  let closed = false;
  port.on('message', (r: Reply) => {
    const w = waiting.get(r.id);
    if (!w) return;
    waiting.delete(r.id);
    if ('error' in r) w.reject(Object.assign(new Error(r.error.message), r.error));
    else w.resolve({ rows: r.rows as unknown[] });
  });
  const fail = () => {
    closed = true;
    for (const w of waiting.values()) w.reject(new ProxyClosedError());
    waiting.clear();
  };
  port.on('close', fail);
  const db = drizzle(
    (sql, params, method) =>
      new Promise((resolve, reject) => {
        if (closed) return reject(new ProxyClosedError());
        const id = next++;
        waiting.set(id, { resolve, reject });
        port.postMessage({ id, sql, params, method: method === 'all' ? 'all' : 'execute' } satisfies Request);
      }),
    { schema },
  ) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    // The API takes no lock (DESIGN 9: it inserts configurations, one statement each).
    withLock: () => Promise.reject(new Error('no locks in the API thread')),
    ifFree: () => Promise.reject(new Error('no locks in the API thread')),
    close: async () => {
      fail();
      port.close();
    },
  };
}
