import { spawn } from 'node:child_process';
import { Client, Pool } from 'pg';
import { createTestDatabase } from '../helpers/db';
import { killAndWait } from '../helpers/process';

/** The test-database helper: nothing a test started is cut off by the drop, and a leak is named, not hidden. */

const exists = async (name: string) => {
  const c = new Client({ connectionString: process.env.DATABASE_URL });
  await c.connect();
  try {
    return (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  } finally {
    await c.end();
  }
};

it('drop() waits for a pool that is still closing, then drops without terminating anyone', async () => {
  const database = await createTestDatabase();
  const pool = new Pool({ connectionString: database.url, max: 2 });
  const errors: unknown[] = [];
  pool.on('error', (e) => errors.push(e));
  await pool.query('SELECT 1');
  const dropping = database.drop();
  await new Promise((r) => setTimeout(r, 500));
  await pool.end();
  await dropping;
  expect(errors).toEqual([]);
  expect(await exists(database.name)).toBe(false);
});

it('drop() waits for a killed child process to let go of its connection', async () => {
  const database = await createTestDatabase();
  const child = spawn(process.execPath, ['-e', `const { Client } = require('pg'); const c = new Client({ connectionString: ${JSON.stringify(database.url)} }); c.connect().then(() => console.log('connected')); setInterval(() => {}, 1000);`], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((r) => child.stdout!.once('data', () => r()));
  await killAndWait([child]);
  expect(child.signalCode).toBe('SIGKILL');
  await database.drop();
  expect(await exists(database.name)).toBe(false);
});

it('a connection left open is reported by drop(), naming it, and the database is still dropped', async () => {
  const database = await createTestDatabase();
  const leaked = new Client({ connectionString: `${database.url}?application_name=leaky-test` });
  const terminated = new Promise<Error>((r) => leaked.on('error', r));
  await leaked.connect();
  const started = Date.now();
  await expect(database.drop()).rejects.toThrow(/still in use .*leaky-test.*close every pool, worker, watcher and child process/);
  expect(Date.now() - started).toBeGreaterThanOrEqual(14_000);
  expect(((await terminated) as Error & { code?: string }).code).toBe('57P01');
  expect(await exists(database.name)).toBe(false);
}, 40_000);
