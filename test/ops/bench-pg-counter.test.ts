import { Client } from 'pg';
import { startPgCounter } from '../../bench/pipeline/counting-proxies';
import { createTestDatabase } from '../helpers/db';

/**
 * bench/pipeline.ts --costs counts the gateway's PostgreSQL statements and round trips on the wire: what
 * node-postgres sends for each kind of query the gateway makes must come out as one would count it by hand.
 */
describe('bench PostgreSQL counting relay', () => {
  it('counts a simple query, a parameterised one and a transaction as statements and round trips', async () => {
    const db = await createTestDatabase();
    const relay = await startPgCounter(db.url);
    const client = new Client({ connectionString: relay.url });
    try {
      await client.connect();
      expect(relay.snapshot()).toMatchObject({ statements: 0, roundTrips: 0, connections: 1 });
      // Simple protocol (no parameters): one Query message.
      await client.query('SELECT 1');
      expect(relay.snapshot()).toMatchObject({ statements: 1, roundTrips: 1 });
      // Extended protocol: Parse/Bind/Describe/Execute/Sync in one write, one answer awaited.
      const r = await client.query<{ n: number }>('SELECT $1::int AS n', [41]);
      expect(r.rows[0].n).toBe(41);
      expect(relay.snapshot()).toMatchObject({ statements: 2, roundTrips: 2 });
      // A named (prepared) statement used twice: the second skips Parse, still one Execute and one Sync.
      await client.query({ name: 'q', text: 'SELECT $1::text AS s', values: ['a'] });
      await client.query({ name: 'q', text: 'SELECT $1::text AS s', values: ['b'] });
      expect(relay.snapshot()).toMatchObject({ statements: 4, roundTrips: 4 });
      // A transaction is three round trips.
      await client.query('BEGIN');
      await client.query('CREATE TEMP TABLE t (x int)');
      await client.query('COMMIT');
      expect(relay.snapshot()).toMatchObject({ statements: 7, roundTrips: 7 });
      // Per SQL text, the prepared one under the text its Parse gave it.
      expect(relay.snapshot().bySql).toMatchObject({ 'SELECT $1::text AS s': { statements: 2, roundTrips: 2 }, BEGIN: { statements: 1, roundTrips: 1 }, 'SELECT 1': { statements: 1, roundTrips: 1 } });
    } finally {
      await client.end();
      await relay.close();
      await db.drop();
    }
  });
});
