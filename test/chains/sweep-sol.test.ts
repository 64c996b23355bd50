/**
 * `npm run admin -- sweep` on a live surfnet and the real PostgreSQL (src/sweep/): a completed SOL payment leaves
 * its commission at address_in; the dry run lists exactly that balance, as a commission; execute moves all of it
 * less the fee to the treasury (the account closes: nothing below rent stays), counted on chain and recorded; a
 * later run reads the stored sweep's fate and never signs again; once done, a run sends nothing. An address
 * with a live payment is neither listed nor swept, and nor is one that a transaction touched after the block
 * the watcher has read (a deposit not recorded yet).
 */
import { LAMPORTS_PER_SOL } from '@solana/web3.js';
import { LAMPORTS_PER_SIGNATURE } from '../../src/chains/sol/forward';
import { loadPayment } from '../../src/db/queries/payments';
import { percentOf } from '../../src/domain/money';
import { executeSweeps, type SweepReport } from '../../src/sweep/execute';
import { listSweepable } from '../../src/sweep/list';
import { createTestDatabase } from '../helpers/db';
import { surfnetChain, testSeed, type LiveChain } from '../helpers/nodes';
import { waitFor } from '../helpers/process';
import { sweepBench } from '../helpers/sweep';

jest.setTimeout(180_000);

let chain: LiveChain;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let bench: ReturnType<typeof sweepBench>;

beforeAll(async () => {
  [chain, database] = await Promise.all([surfnetChain('sol', testSeed()), createTestDatabase()]);
  bench = sweepBench(chain, database);
});

afterAll(async () => {
  await chain?.stop();
  await database?.drop();
});

test('a commission left by a completed payment is listed, swept whole to the treasury, recorded; a later run never signs again', async () => {
  const value = 2n * BigInt(LAMPORTS_PER_SOL);
  const done = await bench.deposit(51n, value);
  await bench.complete(done.uuid);
  const live = await bench.deposit(52n, BigInt(LAMPORTS_PER_SOL) / 2n);
  await bench.watcherAtHead();

  const { payment } = await loadPayment(database.db, done.uuid);
  const left = value - BigInt(payment.forwardedBase) - LAMPORTS_PER_SIGNATURE;
  expect(left).toBe(percentOf(value, payment.feePercent));
  expect(await chain.balanceOf(done.addressIn)).toBe(left);

  const listing = await listSweepable(bench.deps);
  expect(listing.balances).toEqual([
    { network: 'solana', ticker: 'sol', addressIn: done.addressIn, derivationIndex: '51', addressOut: expect.any(String), amount: left.toString(), why: ['commission'] },
  ]);
  expect(listing.totals).toEqual([{ ticker: 'sol', amount: left.toString(), addresses: 1 }]);
  expect(listing.skipped).toEqual([{ network: 'solana', addressIn: live.addressIn, why: 'a payment to this address is live' }]);

  const treasuryBefore = await chain.balanceOf(bench.treasury);
  const liveBefore = await chain.balanceOf(live.addressIn);
  const first = await executeSweeps(bench.deps, { to: 'treasury', tickers: ['sol'] });
  expect(first.moves).toEqual([
    expect.objectContaining({ addressIn: done.addressIn, destination: bench.treasury, amount: (left - LAMPORTS_PER_SIGNATURE).toString(), signedNow: true }),
  ]);
  const txid = first.moves[0].txid;
  // Runs until the sweep is read mined: each one reads (or re-sends) the stored bytes, never signs again.
  let last: SweepReport = first;
  await waitFor(async () => {
    if (last.moves[0]?.status === 'confirmed') return true;
    last = await executeSweeps(bench.deps, { to: 'treasury', tickers: ['sol'] });
    expect(last.moves).toEqual([expect.objectContaining({ txid })]);
    return false;
  }, 60_000, 'the sweep mined');
  // Counted on chain: everything but the fee reached the treasury; the account is closed.
  expect(await chain.balanceOf(bench.treasury)).toBe(treasuryBefore + left - LAMPORTS_PER_SIGNATURE);
  expect(await chain.balanceOf(done.addressIn)).toBe(0n);
  expect(await chain.balanceOf(live.addressIn)).toBe(liveBefore);
  expect(await bench.sweepRows(done.addressIn)).toMatchObject([
    { txid, ticker: 'sol', destination: bench.treasury, amount: (left - LAMPORTS_PER_SIGNATURE).toString(), fee: LAMPORTS_PER_SIGNATURE.toString(), status: 'confirmed' },
  ]);

  const again = await executeSweeps(bench.deps, { to: 'treasury', tickers: ['sol'] });
  expect(again.moves).toEqual([]);
  expect(await chain.balanceOf(bench.treasury)).toBe(treasuryBefore + left - LAMPORTS_PER_SIGNATURE);
  expect(await bench.sweepRows(done.addressIn)).toHaveLength(1);
  expect((await listSweepable(bench.deps)).balances).toEqual([]);
});

test('a deposit the watcher has not read yet (no payment recorded) keeps its address out of the sweep', async () => {
  const done = await bench.deposit(53n, 2n * BigInt(LAMPORTS_PER_SOL));
  await bench.complete(done.uuid);
  await bench.watcherAtHead();
  // A customer pays again after the block the watcher read: nothing records it yet.
  await chain.pay(done.addressIn, BigInt(LAMPORTS_PER_SOL));
  const before = await chain.balanceOf(done.addressIn);
  const listing = await listSweepable(bench.deps, { addresses: [done.addressIn] });
  expect(listing.balances).toEqual([]);
  expect(listing.skipped).toEqual([expect.objectContaining({ addressIn: done.addressIn, ticker: 'sol', why: expect.stringMatching(/after the block the watcher has read/) })]);
  const report = await executeSweeps(bench.deps, { to: 'treasury', addresses: [done.addressIn] });
  expect(report.moves).toEqual([]);
  expect(await chain.balanceOf(done.addressIn)).toBe(before);
  expect(await bench.sweepRows(done.addressIn)).toEqual([]);
});
