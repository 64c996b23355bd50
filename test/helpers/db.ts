import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { openPostgres, type Database } from '../../src/db/client';

function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set; jest global-setup should have started PostgreSQL');
  return url;
}

/**
 * A fresh, migrated database on the real server for one test file (or one test): no state leaks between
 * tests. drop() removes it again.
 */
export async function createTestDatabase(): Promise<Database & { url: string; drop(): Promise<void> }> {
  const name = `gw_test_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(serverUrl());
  u.pathname = `/${name}`;
  const database = await openPostgres(u.toString());
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await database.close();
  };
  return {
    ...database,
    url: u.toString(),
    close,
    async drop() {
      await close();
      const a = new Client({ connectionString: serverUrl() });
      await a.connect();
      // pool.end() resolves before its clients' sockets close; a forced drop would then send those
      // still-closing clients an error that the pool emits with no listener left (an uncaught error).
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline) {
        const r = await a.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
        if (r.rows[0].n === 0) break;
        await new Promise((res) => setTimeout(res, 50));
      }
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}
