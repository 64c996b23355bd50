import { sql } from 'drizzle-orm';
import { Client } from 'pg';
import { openPostgres } from '../../src/db/client';
import { createTestDatabase } from '../helpers/db';

/**
 * Named locks across processes (one per address_in forwarding at once): their sessions come from a pool of
 * their own, so more holders than the query pool has connections still get their queries through.
 */
it('many lock holders at once never starve the queries they run', async () => {
  const database = await createTestDatabase();
  const small = await openPostgres(database.url, { migrate: false, max: 2 });
  try {
    const order: string[] = [];
    const run = (name: string) =>
      small.withLock(name, async () => {
        await small.db.execute(sql`SELECT pg_sleep(0.05)`);
        order.push(name);
      });
    const all = Promise.all(Array.from({ length: 8 }, (_, i) => run(`forward:test:source-${i}`)));
    await expect(Promise.race([all, new Promise((_, reject) => setTimeout(() => reject(new Error('lock holders starved')), 20_000))])).resolves.toBeDefined();
    expect(order).toHaveLength(8);
    // The same name still excludes: two holders of one name run one after the other.
    const spans: Array<[number, number]> = [];
    const hold = () =>
      small.withLock('forward:test:same', async () => {
        const t = Date.now();
        await small.db.execute(sql`SELECT pg_sleep(0.1)`);
        spans.push([t, Date.now()]);
      });
    await Promise.all([hold(), hold()]);
    spans.sort((a, b) => a[0] - b[0]);
    expect(spans[1][0]).toBeGreaterThanOrEqual(spans[0][1]);
  } finally {
    await small.close();
    await database.drop();
  }
}, 60_000);

/** Two names with the same hashtext (found once with a query over generated names; PostgreSQL's hash is fixed). */
const COLLIDING = ['lock-collision-3463', 'lock-collision-74621'] as const;

/** A promise and the function that settles it: a holder waits on it, the test opens it. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

/** The sessions holding granted advisory locks now, by application name. */
async function holders(url: string): Promise<Array<{ pid: number; app: string; n: number }>> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number; app: string; n: string }>(
      `SELECT l.pid, a.application_name AS app, count(*) AS n FROM pg_locks l JOIN pg_stat_activity a USING (pid)
        WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database() GROUP BY 1, 2`,
    );
    return rows.map((r) => ({ pid: r.pid, app: r.app, n: Number(r.n) }));
  } finally {
    await c.end();
  }
}

describe('one session for the locks nobody else holds', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const opened: Array<Awaited<ReturnType<typeof openPostgres>>> = [];
  const open = async () => {
    const d = await openPostgres(database.url, { migrate: false });
    opened.push(d);
    return d;
  };
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    for (const d of opened.splice(0)) await d.close();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('a burst of uncontended holders takes every lock on one session, and opens no connection each', async () => {
    // One statement at a time on that session: pg 8 warns of a query sent while another runs, pg 9 drops its queue.
    const running = new Map<Client, number>();
    let most = 0;
    const original = Client.prototype.query;
    const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
      const n = (running.get(this) ?? 0) + 1;
      running.set(this, n);
      most = Math.max(most, n);
      const done = () => void running.set(this, running.get(this)! - 1);
      const out = (original as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      void out.then(done, done);
      return out as never;
    });
    const p = await open();
    const g = gate();
    const inside: string[] = [];
    const all = Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        p.withLock(`forward:test:burst-${i}`, async () => {
          inside.push(String(i));
          await g.wait;
        }),
      ),
    );
    while (inside.length < 12) await new Promise((r) => setTimeout(r, 10));
    expect(await holders(database.url)).toEqual([expect.objectContaining({ app: 'gateway locks', n: 12 })]);
    g.open();
    await all;
    expect(await holders(database.url)).toEqual([]);
    spy.mockRestore();
    expect(most).toBe(1);
  });

  it('a lock another process holds is waited for, then taken', async () => {
    const [a, b] = [await open(), await open()];
    const spans: Record<string, [number, number]> = {};
    const hold = (d: typeof a, who: string, ms: number) =>
      d.withLock('forward:test:shared', async () => {
        const t = Date.now();
        await new Promise((r) => setTimeout(r, ms));
        spans[who] = [t, Date.now()];
      });
    const first = hold(a, 'a', 300);
    await new Promise((r) => setTimeout(r, 50));
    await Promise.all([first, hold(b, 'b', 10)]);
    expect(spans.b[0]).toBeGreaterThanOrEqual(spans.a[1]);
    // And the other way round, the waiter now being the process whose shared session took the first lock.
    const second = hold(b, 'b2', 300);
    await new Promise((r) => setTimeout(r, 50));
    await Promise.all([second, hold(a, 'a2', 10)]);
    expect(spans.a2[0]).toBeGreaterThanOrEqual(spans.b2[1]);
  });

  it('ifFree: a lock another process holds is not waited for (false at once, nothing run); free, it is taken', async () => {
    const [a, b] = [await open(), await open()];
    const g = gate();
    let inside = false;
    const holding = a.withLock('watch:test', async () => {
      inside = true;
      await g.wait;
    });
    while (!inside) await new Promise((r) => setTimeout(r, 10));
    let ran = 0;
    const t = Date.now();
    expect(await b.ifFree('watch:test', async () => void ran++)).toBe(false);
    expect(Date.now() - t).toBeLessThan(1_000);
    expect(ran).toBe(0);
    g.open();
    await holding;
    expect(await b.ifFree('watch:test', async () => void ran++)).toBe(true);
    expect(ran).toBe(1);
    // Taken by ifFree, the lock is held for the others as any other: a's ifFree meanwhile answers false.
    const g2 = gate();
    let inB = false;
    const bHolds = b.ifFree('watch:test', async () => {
      inB = true;
      await g2.wait;
    });
    while (!inB) await new Promise((r) => setTimeout(r, 10));
    expect(await a.ifFree('watch:test', async () => void ran++)).toBe(false);
    g2.open();
    expect(await bHolds).toBe(true);
    expect(ran).toBe(1);
  });

  it('two names with the same hash never hold at once in one process', async () => {
    const p = await open();
    const spans: Array<[number, number]> = [];
    await Promise.all(
      COLLIDING.map((name) =>
        p.withLock(name, async () => {
          const t = Date.now();
          await new Promise((r) => setTimeout(r, 200));
          spans.push([t, Date.now()]);
        }),
      ),
    );
    spans.sort((x, y) => x[0] - y[0]);
    expect(spans[1][0]).toBeGreaterThanOrEqual(spans[0][1]);
  });

  it('a lost lock session takes its locks with it; a holder from before releases nothing on the next session', async () => {
    const [p, other] = [await open(), await open()];
    const g = gate();
    let entered = false;
    const old = p.withLock(COLLIDING[0], async () => {
      entered = true;
      await g.wait;
      return 'finished';
    });
    while (!entered) await new Promise((r) => setTimeout(r, 10));
    const admin = new Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gateway locks' AND datname = current_database()`);
      // The lock went with the session: another process takes the name at once.
      await expect(other.withLock(COLLIDING[0], async () => 'taken')).resolves.toBe('taken');
      // The same hash, taken under the other name on the new session, stays held when the old holder releases.
      const g2 = gate();
      let second = false;
      const next = p.withLock(COLLIDING[1], async () => {
        second = true;
        await g2.wait;
      });
      while (!second) await new Promise((r) => setTimeout(r, 10));
      g.open();
      await expect(old).resolves.toBe('finished');
      const { rows } = await admin.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [COLLIDING[1]]);
      expect(rows[0].ok).toBe(false);
      g2.open();
      await next;
      const again = await admin.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [COLLIDING[1]]);
      expect(again.rows[0].ok).toBe(true);
    } finally {
      await admin.end();
    }
  });
});
