import { sql } from 'drizzle-orm';
import { createMinimumActivities, minimumFor, type MinimumDeps } from '../../activities/minimums';
import type { ConfigRow } from '../../src/db/queries/payments';
import { recordComputed } from '../../src/db/queries/minimums';
import { ASSETS } from '../../src/domain/assets';
import { parseUnits } from '../../src/domain/money';
import { STANDARD_TIERS } from '../../src/domain/standard-tiers';
import { DEVNET_PRICES, FixedPriceSource } from '../../src/prices/source';
import { createTestDatabase } from '../helpers/db';
import { waitFor } from '../helpers/process';

/**
 * A customer pays the minimum the catalog showed; a refresh (a worker's start triggers one) or the operator
 * raises it before the deposit is evaluated. The figure replaced stays honoured for one refresh interval, so
 * that deposit is not refused; past the interval the current figure holds. On real PostgreSQL.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
const ltc = ASSETS.ltc;
const floor = parseUnits(ltc.minimumFloor, ltc.decimals);
const config = {} as ConfigRow; // the configuration plays no part in the minimum a deposit is held to
const heldTo = () => minimumFor(database.db, config, ltc);

/** The minimum activities with a stated figure honoured for `refreshMs` after it is replaced. */
function minimums(refreshMs: number) {
  const deps = {
    db: database.db,
    chains: {},
    adapter: () => Promise.reject(new Error('no node in this test')),
    prices: new FixedPriceSource(DEVNET_PRICES),
    maxCostPercent: '5.00',
    feePolicy: { domainOverrides: {}, tiers: [...STANDARD_TIERS] },
    refreshMs,
  };
  return createMinimumActivities(deps as MinimumDeps);
}

const superseded = async () =>
  ((await database.db.execute(sql`SELECT ticker, value_base::text AS v FROM superseded_minimums ORDER BY v`)) as unknown as { rows: { ticker: string; v: string }[] }).rows;

beforeAll(async () => {
  database = await createTestDatabase();
}, 60_000);
afterAll(async () => {
  await database?.drop();
});
beforeEach(async () => {
  await database.db.execute(sql`DELETE FROM asset_minimums; DELETE FROM superseded_minimums`);
});

it('a pin raised from A to B: a deposit is held to A within the refresh interval', async () => {
  const acts = minimums(60_000);
  await acts.pinMinimum({ ticker: 'ltc', value: '0.002' });
  expect(await heldTo()).toBe(2n * floor);
  await acts.pinMinimum({ ticker: 'ltc', value: '0.005' });
  expect(await heldTo()).toBe(2n * floor);
});

it('a refresh that raises the figure honours the one it replaced; a lower figure honours nothing', async () => {
  await recordComputed(database.db, 'ltc', 3n * floor, 60_000);
  expect(await heldTo()).toBe(3n * floor);
  await recordComputed(database.db, 'ltc', 4n * floor, 60_000);
  expect(await heldTo()).toBe(3n * floor);
  // Down to 2: the current figure is the lowest; nothing higher is kept.
  await recordComputed(database.db, 'ltc', 2n * floor, 60_000);
  expect(await heldTo()).toBe(2n * floor);
  // Up to 6, then 5: both 3 (still honoured) and 2 were shown within the interval; the lowest holds.
  await recordComputed(database.db, 'ltc', 6n * floor, 60_000);
  await recordComputed(database.db, 'ltc', 5n * floor, 60_000);
  expect(await heldTo()).toBe(2n * floor);
  expect((await superseded()).map((r) => r.v)).toEqual([String(2n * floor), String(3n * floor)]);
});

it('clearing a pin above the computed figure honours nothing; pinning above it honours the computed figure', async () => {
  const acts = minimums(60_000);
  await recordComputed(database.db, 'ltc', 3n * floor, 60_000);
  await acts.pinMinimum({ ticker: 'ltc', value: '0.010' });
  expect(await heldTo()).toBe(3n * floor);
  await acts.pinMinimum({ ticker: 'ltc', value: null });
  expect(await heldTo()).toBe(3n * floor);
  expect((await superseded()).map((r) => r.v)).toEqual([String(3n * floor)]);
});

it('past the refresh interval the current figure holds, and the next write deletes what expired', async () => {
  await recordComputed(database.db, 'ltc', 3n * floor, 500);
  await recordComputed(database.db, 'ltc', 4n * floor, 500);
  await waitFor(async () => (await heldTo()) === 4n * floor, 10_000, 'the honoured figure expired');
  expect(await superseded()).toHaveLength(1);
  await recordComputed(database.db, 'ltc', 4n * floor, 500);
  expect(await superseded()).toEqual([]);
});

it('each asset keeps its own: a raise of one leaves the others at their figures', async () => {
  await recordComputed(database.db, 'ltc', 3n * floor, 60_000);
  await recordComputed(database.db, 'eth', parseUnits('0.002', 18), 60_000);
  await recordComputed(database.db, 'eth', parseUnits('0.004', 18), 60_000);
  expect(await heldTo()).toBe(3n * floor);
  expect(await minimumFor(database.db, config, ASSETS.eth)).toBe(parseUnits('0.002', 18));
  expect((await superseded()).map((r) => r.ticker)).toEqual(['eth']);
});
