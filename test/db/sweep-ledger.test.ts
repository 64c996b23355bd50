/**
 * The sweeps ledger (src/db/queries/sweeps.ts) on PostgreSQL and on PGlite (the embedded default, where the
 * worker runs the sweep): one open sweep per source and asset, a second signature refused while it is open;
 * a sweep's nonce reserved for forwards until it is dropped; a live payment found by its address; failed
 * payments below the minimum told apart for the listing.
 */
import { paymentConfigs } from '../../src/db/schema';
import { moveResult, recordDeposit } from '../../src/db/queries/payments';
import { nonceFloor, storeForwardOnce } from '../../src/db/queries/forwards';
import { hasLivePayment, openSweep, paymentTallies, settleSweep, storeSweepOnce } from '../../src/db/queries/sweeps';
import { openPglite, type Db } from '../../src/db/client';
import { createTestDatabase } from '../helpers/db';
import { callbackColumns } from '../helpers/callback-columns';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

const sweepOf = (txid: string, source: string, nonce: number) => ({
  txid, network: 'ethereum', ticker: 'eth', source, destination: '0x00000000000000000000000000000000000000fe', amount: 5n, fee: 1n, plan: '{}', nonce,
});

async function ledgerChecks(db: Db) {
  const source = `0x${Math.random().toString(16).slice(2).padEnd(40, '0').slice(0, 40)}`;
  const [config] = await db
    .insert(paymentConfigs)
    .values({
      ...callbackColumns(`https://shop.example/sweep?${Math.random()}`), ticker: 'eth', family: 'evm', addressIn: source, addressOut: '0x00000000000000000000000000000000000000b2',
      derivationIndex: 7n, notifyPending: false, notifyConfirmations: 12, post: 0, json: 0, convert: 0, priority: 'default',
    })
    .returning();
  let n = 0;
  const deposit = async () => {
    const key = `deposit:ethereum:0x${++n}${Math.random()}:-1`;
    const { row } = await recordDeposit(db, { configId: config.id, ticker: 'eth', network: 'ethereum', depositKey: key, txidIn: key, vout: null, blockNumber: 1n, blockHash: '0xb', valueBase: 1n });
    return row;
  };

  // A recorded deposit is live until it ends.
  const a = await deposit();
  expect(await hasLivePayment(db, 'ethereum', source)).toBe(true);
  expect(await hasLivePayment(db, 'solana', source)).toBe(false);
  await moveResult(db, a.uuid, ['pending'], 'failed', 'deposit 0.0001 is below the minimum 0.001');
  const b = await deposit();
  await moveResult(db, b.uuid, ['pending'], 'failed', 'no price to recover the network cost');
  expect(await hasLivePayment(db, 'ethereum', source)).toBe(false);
  const tallies = (await paymentTallies(db, ['evm'])).filter((t) => t.configId === config.id);
  expect(await paymentTallies(db, ['sol'])).toEqual([]);
  expect(tallies.sort((x, y) => Number(x.below) - Number(y.below))).toEqual([
    { configId: config.id, network: 'ethereum', ticker: 'eth', result: 'failed', below: false, n: 1 },
    { configId: config.id, network: 'ethereum', ticker: 'eth', result: 'failed', below: true, n: 1 },
  ]);

  // A forward at nonce 3 on record; a sweep at nonce 4 reserves 4 too.
  const c = await deposit();
  expect(await storeForwardOnce(db, c.uuid, '{}', `0xf${source}`, { network: 'ethereum', source, nonce: 3 })).toBe(true);
  expect(await nonceFloor(db, 'ethereum', source)).toBe(4);
  expect(await storeSweepOnce(db, sweepOf(`0xs1${source}`, source, 4))).toBe(true);
  expect(await nonceFloor(db, 'ethereum', source)).toBe(5);
  // While it is open, a second sweep of the source and asset is not stored.
  expect(await storeSweepOnce(db, sweepOf(`0xs2${source}`, source, 5))).toBe(false);
  expect((await openSweep(db, 'ethereum', source, 'eth'))?.txid).toBe(`0xs1${source}`);
  // Dropped (it can never land): its nonce is free again, and a new sweep may be stored.
  await settleSweep(db, `0xs1${source}`, 'dropped', 'nonce taken');
  expect(await nonceFloor(db, 'ethereum', source)).toBe(4);
  expect(await openSweep(db, 'ethereum', source, 'eth')).toBeUndefined();
  expect(await storeSweepOnce(db, sweepOf(`0xs3${source}`, source, 4))).toBe(true);
  // Settled once, it stays as it was settled.
  await settleSweep(db, `0xs3${source}`, 'confirmed');
  await settleSweep(db, `0xs3${source}`, 'dropped');
  expect(await nonceFloor(db, 'ethereum', source)).toBe(5);
}

it('on PostgreSQL', async () => {
  await ledgerChecks(database.db);
});

it('on PGlite', async () => {
  const lite = await openPglite(undefined, { migrate: true });
  try {
    await ledgerChecks(lite.db);
  } finally {
    await lite.close();
  }
});
