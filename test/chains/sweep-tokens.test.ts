/**
 * Token sweeps (src/sweep/) on live nodes and the real PostgreSQL: the commission an ERC-20 payment leaves at
 * address_in is moved to the treasury with a gas top-up from the gas tank (anvil), an SPL one with the fee
 * payer paying (surfnet); each counted on chain (the treasury holds exactly the amount, address_in none),
 * recorded, and not sent again by a second run.
 */
import { formatEther } from 'ethers';
import { loadPayment } from '../../src/db/queries/payments';
import { executeSweeps } from '../../src/sweep/execute';
import { listSweepable } from '../../src/sweep/list';
import { createTestDatabase } from '../helpers/db';
import { anvilChain, surfnetChain, testSeed, type LiveChain } from '../helpers/nodes';
import { waitFor } from '../helpers/process';
import { sweepBench } from '../helpers/sweep';

jest.setTimeout(180_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

describe.each([
  ['ERC-20 on anvil', () => anvilChain('erc20_usdt', testSeed()), 61n],
  ['SPL on surfnet', () => surfnetChain('sol_usdc', testSeed()), 71n],
])('%s', (_name, start, index) => {
  let chain: LiveChain;
  let bench: ReturnType<typeof sweepBench>;
  beforeAll(async () => {
    chain = await start();
    bench = sweepBench(chain, database);
  });
  afterAll(async () => {
    await chain?.stop();
  });

  test('the commission is listed, swept to the treasury with the sponsor paying the fee, recorded, and swept once', async () => {
    const done = await bench.deposit(index, chain.amount);
    await bench.complete(done.uuid);
    await bench.watcherAtHead();
    const { payment } = await loadPayment(database.db, done.uuid);
    const left = chain.amount - BigInt(payment.forwardedBase);
    expect(left).toBeGreaterThan(0n);
    expect(await chain.balanceOf(done.addressIn)).toBe(left);

    const listing = await listSweepable(bench.deps, { addresses: [done.addressIn], tickers: [chain.ticker] });
    expect(listing.balances).toEqual([expect.objectContaining({ ticker: chain.ticker, addressIn: done.addressIn, amount: left.toString(), why: ['commission'] })]);

    const treasuryBefore = await chain.balanceOf(bench.treasury);
    let report = await executeSweeps(bench.deps, { to: 'treasury', addresses: [done.addressIn], tickers: [chain.ticker] });
    expect(report.moves).toEqual([expect.objectContaining({ ticker: chain.ticker, amount: left.toString(), destination: bench.treasury, signedNow: true })]);
    const { txid } = report.moves[0];
    await waitFor(async () => {
      if (report.moves[0]?.status === 'confirmed') return true;
      report = await executeSweeps(bench.deps, { to: 'treasury', addresses: [done.addressIn], tickers: [chain.ticker] });
      expect(report.moves).toEqual([expect.objectContaining({ txid, signedNow: false })]);
      return false;
    }, 60_000, 'the sweep mined');
    expect(await chain.balanceOf(bench.treasury)).toBe(treasuryBefore + left);
    expect(await chain.balanceOf(done.addressIn)).toBe(0n);
    expect(await bench.sweepRows(done.addressIn)).toMatchObject([{ txid, ticker: chain.ticker, amount: left.toString(), status: 'confirmed' }]);

    const again = await executeSweeps(bench.deps, { to: 'treasury', addresses: [done.addressIn], tickers: [chain.ticker] });
    expect(again.moves).toEqual([]);
    expect(await chain.balanceOf(bench.treasury)).toBe(treasuryBefore + left);
    expect(await bench.sweepRows(done.addressIn)).toHaveLength(1);
    // EVM: the ether the top-ups brought and the transfers did not burn is listed for what it is.
    if (bench.network === 'ethereum') {
      const rest = (await listSweepable(bench.deps, { addresses: [done.addressIn] })).balances;
      for (const b of rest) expect([b.ticker, b.why, formatEther(b.amount) !== '0.0']).toEqual(['eth', ['gas-left'], true]);
    }
  });
});
