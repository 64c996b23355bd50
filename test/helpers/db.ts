import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { openPostgres, type Database } from '../../src/db/client';

function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set; jest global-setup should have started PostgreSQL');
  return url;
}

/** How long drop() waits for the test's other connections (pools, workers, child processes) to go. */
const RELEASE_WAIT_MS = 15_000;

/** An administrative connection whose own failures are reported where it is used, never as an unhandled 'error' event. */
async function adminClient(): Promise<Client> {
  const c = new Client({ connectionString: serverUrl() });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

interface Holder {
  pid: number;
  application_name: string;
  client_port: number | null;
  state: string | null;
  query: string | null;
}

async function holders(admin: Client, name: string): Promise<Holder[]> {
  const r = await admin.query<Holder>(
    `SELECT pid, application_name, client_port, state, left(query, 80) AS query FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
    [name],
  );
  return r.rows;
}

/**
 * A fresh, migrated database on the real server for one test file (or one test): no state leaks between
 * tests. drop() closes the helper's own pool, waits until every other connection to the database is
 * gone (the test must have closed its pools, workers, watchers and child processes first), and only
 * then drops it. A connection still open after the wait is a leak in the test: the database is dropped
 * anyway (WITH FORCE), and drop() fails naming the leaked connections instead of leaving a random
 * "terminating connection due to administrator command" (57P01) to surface in a later test.
 */
export async function createTestDatabase(): Promise<Database & { url: string; name: string; drop(): Promise<void> }> {
  const name = `gw_test_${randomBytes(6).toString('hex')}`;
  const admin = await adminClient();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(serverUrl());
  u.pathname = `/${name}`;
  const database = await openPostgres(u.toString());
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await database.close();
  };
  let dropped: Promise<void> | undefined;
  const drop = async () => {
    await close();
    const a = await adminClient();
    try {
      let left = await holders(a, name);
      const deadline = Date.now() + RELEASE_WAIT_MS;
      while (left.length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        left = await holders(a, name);
      }
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      if (left.length > 0) {
        const list = left.map((h) => `pid ${h.pid} ${h.application_name || '(no application_name)'} port ${h.client_port} ${h.state}: ${h.query}`).join('; ');
        throw new Error(
          `test database ${name} was still in use ${RELEASE_WAIT_MS / 1000} s after its test released it (${list}): ` +
            'close every pool, worker, watcher and child process the test started before drop()',
        );
      }
    } finally {
      await a.end();
    }
  };
  return {
    ...database,
    name,
    url: u.toString(),
    close,
    drop: () => (dropped ??= drop()),
  };
}
