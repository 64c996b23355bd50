import fs from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { Client, Pool, type PoolClient } from 'pg';
import { logger } from '../observability/logger';
import { advisoryLocks } from './locks';
import * as schema from './schema';

/** Both drivers give the same drizzle query surface; code above this file never knows which one runs. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
/** A transaction handle, as drizzle passes it to db.transaction's callback. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  /**
   * Runs fn while holding a named lock across every process on this database (a PostgreSQL session
   * advisory lock, src/db/locks.ts); with PGlite, which one process owns, an in-process queue.
   */
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Runs fn under the named lock when no other process holds it, and answers false without waiting when one
   * does (src/db/locks.ts); with PGlite, one process, it always runs (after the in-process holder, if any).
   */
  ifFree(name: string, fn: () => Promise<void>): Promise<boolean>;
  close(): Promise<void>;
  /** The PGlite instance this thread owns (kind 'pglite'), to serve another thread's statements. */
  pglite?: PGlite;
  /** PostgreSQL server only: hears NOTIFY on `channel` over a connection of its own (see listenOn). */
  listen?(channel: string, hearer: Hearer): Listener;
}

/**
 * What hears a channel. `heard` from the first notice after `ready` on: notices sent while the connection
 * was down are lost, so each `ready` (after the first connect and after every reconnect) and each `lost`
 * means "anything may have changed".
 */
export interface Hearer {
  notice(payload: string): void;
  ready(): void;
  lost(): void;
}

export interface Listener {
  /**
   * One round trip on the listening connection. PostgreSQL sends a listener every notice of a transaction
   * committed before a command arrives ahead of that command's answer, so when this resolves every notice
   * of a commit made before the call has been given to the hearer. Fails while the connection is down.
   */
  ping(): Promise<void>;
  close(): Promise<void>;
}

const PING_TIMEOUT_MS = 2_000;

/**
 * LISTEN on a connection of its own, connected again `retryMs` after any loss until closed. The hearer
 * is told `lost` at each loss, `ready` once LISTEN has taken after each connect.
 */
export function listenOn(url: string, channel: string, hearer: Hearer, retryMs = 1_000): Listener {
  let closed = false;
  let client: Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** The connection LISTEN has taken on, with what ends it. */
  let up: { client: Client; fail: (e: Error) => void } | undefined;
  const connect = async () => {
    const c = new Client({ connectionString: url, connectionTimeoutMillis: 5_000, application_name: `listen ${channel}` });
    client = c;
    let down = false;
    const fail = (e?: unknown) => {
      if (down) return;
      down = true;
      if (up?.client === c) up = undefined;
      hearer.lost();
      if (!closed) {
        if (e instanceof Error) logger.warn({ err: e.message, channel }, 'PostgreSQL listener lost; listening again shortly');
        timer = setTimeout(() => void connect(), retryMs);
      }
      c.end().catch(() => undefined);
    };
    c.on('error', fail);
    c.on('end', () => fail());
    c.on('notification', (m) => {
      if (!down && m.channel === channel) hearer.notice(m.payload ?? '');
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${c.escapeIdentifier(channel)}`);
      if (!down && !closed) {
        up = { client: c, fail };
        hearer.ready();
      }
    } catch (e) {
      fail(e);
    }
  };
  void connect();
  return {
    ping: async () => {
      const on = up;
      if (!on) throw new Error(`not listening on ${channel}`);
      // A connection that does not answer within this time is taken for lost (and connected again).
      let clock: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        clock = setTimeout(() => {
          const e = new Error(`no answer on the ${channel} listener within ${PING_TIMEOUT_MS} ms`);
          on.fail(e);
          reject(e);
        }, PING_TIMEOUT_MS);
      });
      try {
        await Promise.race([on.client.query(''), late]);
      } finally {
        clearTimeout(clock);
      }
    },
    close: async () => {
      closed = true;
      up = undefined;
      clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}

/** In-process serialisation by name: each caller waits for the previous holder of the same name. */
function inProcessLocks() {
  const tails = new Map<string, Promise<unknown>>();
  return async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const prev = tails.get(name) ?? Promise.resolve();
    const run = prev.catch(() => undefined).then(fn);
    tails.set(name, run);
    try {
      return await run;
    } finally {
      if (tails.get(name) === run) tails.delete(name);
    }
  };
}

export const MIGRATIONS_FOLDER = path.resolve(__dirname, '../../drizzle');

/** Any number of API and worker processes may start at once; one advisory lock orders their migrations. */
const MIGRATION_LOCK = 7_400_117;

/**
 * A server restart or outage ends every connection with an 'error' event: on an idle client the pool
 * emits it, on a checked-out client the client does. Unheard, either ends the process; heard, the query
 * in flight fails (the API answers 1501, an activity retries) and the pool connects afresh next time.
 */
function survivesServerLoss(pool: Pool): void {
  const onError = (e: Error) => logger.warn({ err: e.message }, 'PostgreSQL connection lost; reconnecting on next use');
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
}

/** Whether the connecting role may create in the database, as every migration does (its own schema first). */
async function mayMigrate(pool: Pool): Promise<boolean> {
  const r = await pool.query<{ may: boolean }>("SELECT has_database_privilege(current_database(), 'CREATE') AS may");
  if (!r.rows[0].may) logger.info('this database role may not change the schema: migrations are left to the worker');
  return r.rows[0].may;
}

/** Releases a client, destroying it when its connection failed so the pool never hands it out again. */
function release(client: PoolClient, failed: unknown): void {
  client.release(failed instanceof Error ? failed : undefined);
}

/**
 * `migrate: 'if-permitted'` migrates only with a role that may change the schema: the API's own role
 * (drizzle/0000_init.sql) may not, and leaves the migrations to the worker.
 */
export async function openPostgres(url: string, opts: { migrate?: boolean | 'if-permitted'; max?: number; lockMax?: number } = {}): Promise<Database> {
  // A bounded connect: while the server is away, callers fail fast instead of queueing for ever.
  const pool = new Pool({ connectionString: url, max: opts.max ?? 10, connectionTimeoutMillis: 5_000 });
  survivesServerLoss(pool);
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  if (opts.migrate !== false && (opts.migrate !== 'if-permitted' || (await mayMigrate(pool)))) {
    const client = await pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        await migratePg(drizzlePg(client, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      }
    } finally {
      client.release();
    }
  }
  // Locks nobody else holds are taken on one session of their own (src/db/locks.ts); a lock another
  // process holds is waited for on a session of a pool of its own: a holder's work queries the main pool,
  // so any number of holders can never starve the queries they are waiting for.
  const lockPool = new Pool({ connectionString: url, max: opts.lockMax ?? 20, connectionTimeoutMillis: 30_000 });
  survivesServerLoss(lockPool);
  const locks = advisoryLocks({ url, waitPool: lockPool, local: inProcessLocks(), release });
  return {
    db,
    kind: 'postgres',
    withLock: locks.withLock,
    ifFree: locks.ifFree,
    listen: (channel, hearer) => listenOn(url, channel, hearer),
    close: async () => void (await Promise.all([pool.end(), lockPool.end(), locks.close()])),
  };
}

export const PGLITE_SHARED_BUFFERS = '8MB';

/** Embedded PostgreSQL (WASM) for the one-command default; `dir` undefined means in memory. */
export async function openPglite(dir: string | undefined, opts: { migrate?: boolean } = {}): Promise<Database> {
  if (dir) fs.mkdirSync(dir, { recursive: true });
  // PostgreSQL's default 128 MB of shared buffers fill, in the WASM heap, with pages the host's file cache
  // holds anyway: the embedded default's tables are small, and its process is the one users measure.
  // Loaded here, not at the top: a process or thread on PostgreSQL, or the API thread whose statements the
  // main thread's PGlite runs, never carries PGlite's JavaScript.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { PGlite } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
  const { drizzle: drizzlePglite } = require('drizzle-orm/pglite') as typeof import('drizzle-orm/pglite');
  const { migrate: migratePglite } = require('drizzle-orm/pglite/migrator') as typeof import('drizzle-orm/pglite/migrator');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const client = new PGlite({ dataDir: dir, startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`] });
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  if (opts.migrate !== false) {
    await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
  }
  const withLock = inProcessLocks();
  return { db, kind: 'pglite', withLock, ifFree: (name, fn) => withLock(name, fn).then(() => true), close: () => client.close(), pglite: client };
}

/** DATABASE_URL set → that server; unset → PGlite under DATA_DIR/pglite. */
export function openDatabase(cfg: { databaseUrl?: string; dataDir: string }): Promise<Database> {
  return cfg.databaseUrl ? openPostgres(cfg.databaseUrl) : openPglite(path.join(cfg.dataDir, 'pglite'));
}

export async function ping(db: Db): Promise<void> {
  await db.execute(sql`SELECT 1`);
}
