import { sql } from 'drizzle-orm';
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
