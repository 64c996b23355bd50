import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { Pool } from 'pg';
import * as schema from './schema';

/** Both drivers give the same drizzle query surface; code above this file never knows which one runs. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  /**
   * Runs fn while holding a named lock across every process on this database (a PostgreSQL session
   * advisory lock on its own connection); with PGlite, which one process owns, an in-process queue.
   */
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
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

export async function openPostgres(url: string, opts: { migrate?: boolean; max?: number } = {}): Promise<Database> {
  const pool = new Pool({ connectionString: url, max: opts.max ?? 10 });
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  if (opts.migrate !== false) {
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
  const local = inProcessLocks();
  const withLock = <T>(name: string, fn: () => Promise<T>) =>
    local(name, async () => {
      const client = await pool.connect();
      try {
        await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
        try {
          return await fn();
        } finally {
          await client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
        }
      } finally {
        client.release();
      }
    });
  return { db, kind: 'postgres', withLock, close: () => pool.end() };
}

/** Embedded PostgreSQL (WASM) for the one-command default; `dir` undefined means in memory. */
export async function openPglite(dir: string | undefined, opts: { migrate?: boolean } = {}): Promise<Database> {
  if (dir) fs.mkdirSync(dir, { recursive: true });
  const client = new PGlite(dir);
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  if (opts.migrate !== false) {
    await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
  }
  return { db, kind: 'pglite', withLock: inProcessLocks(), close: () => client.close() };
}

/** DATABASE_URL set → that server; unset → PGlite under DATA_DIR/pglite. */
export function openDatabase(cfg: { databaseUrl?: string; dataDir: string }): Promise<Database> {
  return cfg.databaseUrl ? openPostgres(cfg.databaseUrl) : openPglite(path.join(cfg.dataDir, 'pglite'));
}

export async function ping(db: Db): Promise<void> {
  await db.execute(sql`SELECT 1`);
}
