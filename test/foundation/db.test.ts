import { eq } from 'drizzle-orm';
import { openPglite, openPostgres, type Database } from '../../src/db/client';
import { assetMinimums } from '../../src/db/schema';
import { createTestDatabase } from '../helpers/db';

// Larger than 2^64 and than 2^128: a uint256-sized amount of wei must survive unchanged.
const HUGE = (2n ** 64n * 1_000_003n + 17n).toString();
const UINT256_MAX = (2n ** 256n - 1n).toString();

async function roundTrip(database: Database): Promise<void> {
  for (const [ticker, value] of [['test_a', HUGE], ['test_b', UINT256_MAX]] as const) {
    await database.db.insert(assetMinimums).values({ ticker, valueBase: value });
    const [row] = await database.db.select().from(assetMinimums).where(eq(assetMinimums.ticker, ticker));
    expect(row.valueBase).toBe(value);
    expect(BigInt(row.valueBase!)).toBe(BigInt(value));
  }
}

describe('migrations and NUMERIC(78,0)', () => {
  it('on a real PostgreSQL server', async () => {
    const database = await createTestDatabase();
    try {
      await roundTrip(database);
    } finally {
      await database.drop();
    }
  });

  it('on embedded PGlite', async () => {
    const database = await openPglite(undefined);
    try {
      await roundTrip(database);
    } finally {
      await database.close();
    }
  });

  it('applies migrations idempotently (a second start changes nothing)', async () => {
    const first = await createTestDatabase();
    const second = await openPostgres(first.url);
    await second.close();
    await first.drop();
  });
});
