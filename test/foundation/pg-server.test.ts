import { Client, Pool } from 'pg';
import { startPgServer, type PgServer } from '../helpers/pg-server';

/** The drill's own PostgreSQL: restarted by its postmaster's PID on the same port and data, stopped for good. */
let pg: PgServer;
beforeAll(async () => {
  pg = await startPgServer();
}, 60_000);
afterAll(async () => {
  await pg?.stop();
});

it('restart ends every session, keeps the data, comes back on the same URL with a new postmaster', async () => {
  const c = new Client({ connectionString: pg.url });
  await c.connect();
  await c.query('CREATE TABLE kept (n int)');
  await c.query('INSERT INTO kept VALUES (7)');
  await c.end();
  const pool = new Pool({ connectionString: pg.url, max: 1 });
  const poolErrors: string[] = [];
  pool.on('error', (e) => poolErrors.push(e.message));
  await pool.query('SELECT 1'); // one idle session, cut by the restart
  const before = pg.pid();

  const { downMs } = await pg.restart();
  expect(downMs).toBeLessThan(30_000);
  expect(pg.pid()).not.toBe(before);
  expect(poolErrors.join()).toMatch(/terminating connection/);
  const after = new Client({ connectionString: pg.url });
  await after.connect();
  expect((await after.query('SELECT n FROM kept')).rows).toEqual([{ n: 7 }]);
  await after.end();
  await pool.end();
}, 90_000);

it('stop ends the server: nothing answers on its port', async () => {
  const other = await startPgServer();
  const pid = other.pid()!;
  await other.stop();
  expect(() => process.kill(pid, 0)).toThrow();
  const c = new Client({ connectionString: other.url, connectionTimeoutMillis: 2000 });
  await expect(c.connect()).rejects.toThrow();
}, 90_000);
