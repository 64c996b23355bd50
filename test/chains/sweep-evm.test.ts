/**
 * `npm run admin -- sweep` on a live anvil and the real PostgreSQL (src/sweep/): a completed ETH payment leaves
 * its commission (and the gas its forward did not burn) at address_in; the dry run lists exactly that balance,
 * as a commission; execute moves it to the treasury, counted on chain, and records it; execute run again sends
 * nothing. An address with a live payment is neither listed nor swept; a sweep stored by a run lost before its
 * broadcast is sent by the next run with the same bytes, never signed again.
 */
import { JsonRpcProvider, Network, Transaction, parseEther } from 'ethers';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { nonceFloor } from '../../src/db/queries/forwards';
import { loadPayment } from '../../src/db/queries/payments';
import { storeSweepOnce } from '../../src/db/queries/sweeps';
import { percentOf } from '../../src/domain/money';
import { planToJson } from '../../activities/forward-support';
import { judgeObserved } from '../../activities/observed';
import { executeSweeps } from '../../src/sweep/execute';
import { listSweepable } from '../../src/sweep/list';
import { createTestDatabase } from '../helpers/db';
import { anvilChain, testSeed, tmpDir, type LiveChain } from '../helpers/nodes';
import { sweepBench } from '../helpers/sweep';

jest.setTimeout(120_000);

let node: AnvilDevnet;
let chain: LiveChain;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let bench: ReturnType<typeof sweepBench>;
let provider: JsonRpcProvider;

beforeAll(async () => {
  [node, database] = await Promise.all([startAnvil({ dir: tmpDir('gw-sweep-evm-') }), createTestDatabase()]);
  chain = await anvilChain('eth', testSeed(), node);
  bench = sweepBench(chain, database);
  provider = new JsonRpcProvider(node.rpcUrl, Network.from(node.chainId), { staticNetwork: true, cacheTimeout: -1 });
});

afterAll(async () => {
  provider?.destroy();
  await chain?.stop();
  await node?.stop();
  await database?.drop();
});

/** What a mined transaction burned, from its receipt. */
async function burned(txid: string): Promise<bigint> {
  const r = await provider.getTransactionReceipt(txid);
  if (!r) throw new Error(`${txid} not mined`);
  return r.gasUsed * r.gasPrice;
}

/** A completed payment to address_in `index`, and a sweep of what it left signed and stored, not sent. */
async function storedSweep(index: bigint, value: bigint) {
  const done = await bench.deposit(index, value);
  await bench.complete(done.uuid);
  await bench.watcherAtHead();
  const left = await chain.balanceOf(done.addressIn);
  const plan = await chain.adapter.prepareSweep!({
    ticker: 'eth', derivationIndex: index, source: done.addressIn, destination: bench.treasury, maxBalance: left, nonceFloor: await nonceFloor(database.db, 'ethereum', done.addressIn),
  });
  expect(await storeSweepOnce(database.db, {
    txid: plan.txidOut, network: 'ethereum', ticker: 'eth', source: done.addressIn, destination: bench.treasury, amount: plan.forwarded, fee: plan.networkFee, plan: planToJson(plan), nonce: plan.nonce,
  })).toBe(true);
  return { done, plan, left };
}

test('a commission left by a completed payment is listed with its amount and reason, swept to the treasury once, and recorded', async () => {
  const value = parseEther('1');
  const done = await bench.deposit(41n, value);
  await bench.complete(done.uuid);
  // A payment still live at another address: its deposit is never listed or swept.
  const live = await bench.deposit(42n, parseEther('0.5'));
  await bench.watcherAtHead();

  const { payment } = await loadPayment(database.db, done.uuid);
  const forwardBurned = await burned(payment.txidOut!);
  const left = value - BigInt(payment.forwardedBase) - forwardBurned;
  expect(left).toBeGreaterThanOrEqual(percentOf(value, payment.feePercent));
  expect(await chain.balanceOf(done.addressIn)).toBe(left);

  const listing = await listSweepable(bench.deps);
  expect(listing.balances).toEqual([
    { network: 'ethereum', ticker: 'eth', addressIn: done.addressIn, derivationIndex: '41', addressOut: expect.any(String), amount: left.toString(), why: ['commission'] },
  ]);
  expect(listing.totals).toEqual([{ ticker: 'eth', amount: left.toString(), addresses: 1 }]);
  expect(listing.skipped).toEqual([{ network: 'ethereum', addressIn: live.addressIn, why: 'a payment to this address is live' }]);

  const treasuryBefore = await chain.balanceOf(bench.treasury);
  const liveBefore = await chain.balanceOf(live.addressIn);
  const report = await executeSweeps(bench.deps, { to: 'treasury', tickers: ['eth'] });
  expect(report.moves).toHaveLength(1);
  const [move] = report.moves;
  expect(move).toMatchObject({ network: 'ethereum', ticker: 'eth', addressIn: done.addressIn, destination: bench.treasury, status: 'confirmed', signedNow: true });
  // Counted on chain: the treasury grew by exactly the amount moved; address_in kept only the gas reserve
  // its transfer did not burn (balance − amount − burned), less than one transfer's cost.
  const amount = BigInt(move.amount);
  const sweepBurned = await burned(move.txid);
  expect(await chain.balanceOf(bench.treasury)).toBe(treasuryBefore + amount);
  expect(amount + BigInt(move.fee)).toBe(left);
  const residue = await chain.balanceOf(done.addressIn);
  expect(residue).toBe(left - amount - sweepBurned);
  expect(residue).toBeLessThan(BigInt(move.fee));
  expect(await chain.balanceOf(live.addressIn)).toBe(liveBefore);
  // The dry run now shows what is there (balances read at the watcher's block count nothing that left since).
  expect((await listSweepable(bench.deps, { addresses: [done.addressIn] })).balances).toEqual([
    expect.objectContaining({ addressIn: done.addressIn, ticker: 'eth', amount: residue.toString() }),
  ]);
  expect(report.skipped).toContainEqual({ network: 'ethereum', addressIn: live.addressIn, why: 'a payment to this address is live' });
  const rows = await bench.sweepRows(done.addressIn);
  expect(rows).toMatchObject([{ txid: move.txid, ticker: 'eth', destination: bench.treasury, amount: amount.toString(), status: 'confirmed' }]);
  // The sweep's nonce is on record: a later forward from this address takes the next one.
  expect(await nonceFloor(database.db, 'ethereum', done.addressIn)).toBe(Number(rows[0].nonce) + 1);

  // Run again: nothing is signed or sent (the residue cannot pay a transfer), nothing changes on chain.
  const again = await executeSweeps(bench.deps, { to: 'treasury', tickers: ['eth'] });
  expect(again.moves).toEqual([]);
  expect(again.skipped).toContainEqual(expect.objectContaining({ addressIn: done.addressIn, why: expect.stringMatching(/^not worth moving/) }));
  expect(await chain.balanceOf(bench.treasury)).toBe(treasuryBefore + amount);
  expect(await chain.balanceOf(done.addressIn)).toBe(residue);
  expect(await bench.sweepRows(done.addressIn)).toHaveLength(1);
});

test('an address selected by name whose payment is live is not swept', async () => {
  const live = await bench.deposit(44n, parseEther('0.3'));
  await bench.watcherAtHead();
  const before = await chain.balanceOf(live.addressIn);
  const report = await executeSweeps(bench.deps, { to: 'address_out', addresses: [live.addressIn] });
  expect(report.moves).toEqual([]);
  expect(report.skipped).toEqual([{ network: 'ethereum', addressIn: live.addressIn, why: 'a payment to this address is live' }]);
  expect(await chain.balanceOf(live.addressIn)).toBe(before);
  expect(await bench.sweepRows(live.addressIn)).toEqual([]);
});

test('a sweep stored by a run lost before its broadcast is sent by the next run with the stored bytes, never signed again', async () => {
  // What a run signs and stores before it broadcasts, then the run is lost.
  const { done, plan } = await storedSweep(43n, parseEther('2'));
  expect(await provider.getTransaction(plan.txidOut)).toBeNull();

  const treasuryBefore = await chain.balanceOf(bench.treasury);
  const report = await executeSweeps(bench.deps, { to: 'treasury', addresses: [done.addressIn] });
  expect(report.moves).toEqual([expect.objectContaining({ txid: plan.txidOut, status: 'confirmed', signedNow: false, amount: plan.forwarded.toString() })]);
  expect(await chain.balanceOf(bench.treasury)).toBe(treasuryBefore + plan.forwarded);
  // One transaction from address_in after its forward: the stored one.
  const sent = Transaction.from(plan.txs[0].raw);
  expect(await provider.getTransactionCount(done.addressIn, 'latest')).toBe(sent.nonce + 1);
  expect(await bench.sweepRows(done.addressIn)).toMatchObject([{ txid: plan.txidOut, status: 'confirmed' }]);

  const again = await executeSweeps(bench.deps, { to: 'treasury', addresses: [done.addressIn] });
  expect(again.moves).toEqual([]);
  expect(await chain.balanceOf(bench.treasury)).toBe(treasuryBefore + plan.forwarded);
});

test('a deposit after the block the watcher has read (no payment recorded yet) stays at address_in: only what arrived by then is swept', async () => {
  const done = await bench.deposit(45n, parseEther('1'));
  await bench.complete(done.uuid);
  await bench.watcherAtHead();
  const seen = await chain.balanceOf(done.addressIn);
  // A customer pays again after the watcher's block: nothing records it yet.
  const late = parseEther('0.7');
  await chain.pay(done.addressIn, late);
  const listing = await listSweepable(bench.deps, { addresses: [done.addressIn] });
  expect(listing.balances).toEqual([expect.objectContaining({ addressIn: done.addressIn, ticker: 'eth', amount: seen.toString() })]);
  const report = await executeSweeps(bench.deps, { to: 'treasury', addresses: [done.addressIn] });
  expect(report.moves).toEqual([expect.objectContaining({ status: 'confirmed', signedNow: true })]);
  const [move] = report.moves;
  expect(BigInt(move.amount) + BigInt(move.fee)).toBe(seen);
  // The late deposit is all there, for its own forward once recorded.
  expect(await chain.balanceOf(done.addressIn)).toBe(late + seen - BigInt(move.amount) - (await burned(move.txid)));
  expect(await chain.balanceOf(done.addressIn)).toBeGreaterThan(late);
});

test("a deposit below the minimum is listed as such and, with --to address_out, goes to its configuration's address_out", async () => {
  // Below ETH's floor (0.001): the gateway's own evaluation fails it, and the ether stays at address_in.
  const small = parseEther('0.0009');
  const failed = await bench.deposit(46n, small);
  const rows = await loadPayment(database.db, failed.uuid);
  const verdict = await judgeObserved(bench.depositDeps, rows.payment, rows.config);
  if (verdict.eligible) throw new Error('judged eligible');
  expect(await bench.acts.markFailed(failed.uuid, verdict.reason)).toBe(true);
  await bench.watcherAtHead();
  const { config } = await loadPayment(database.db, failed.uuid);

  const listing = await listSweepable(bench.deps, { addresses: [failed.addressIn] });
  expect(listing.balances).toEqual([expect.objectContaining({ ticker: 'eth', amount: small.toString(), why: ['below-minimum'], addressOut: config.addressOut })]);
  const report = await executeSweeps(bench.deps, { to: 'address_out', addresses: [failed.addressIn] });
  expect(report.moves).toEqual([expect.objectContaining({ destination: config.addressOut, status: 'confirmed' })]);
  const [move] = report.moves;
  expect(await chain.balanceOf(config.addressOut)).toBe(BigInt(move.amount));
  expect(BigInt(move.amount) + BigInt(move.fee)).toBe(small);
  expect(await chain.balanceOf(failed.addressIn)).toBe(small - BigInt(move.amount) - (await burned(move.txid)));
});

test('a sweep the chain mines a moment after its broadcast is reported confirmed; one it does not mine in the wait is reported pending and settled by the next run', async () => {
  const soon = await bench.deposit(47n, parseEther('1'));
  const late = await bench.deposit(48n, parseEther('1'));
  await bench.complete(soon.uuid);
  await bench.complete(late.uuid);
  await bench.watcherAtHead();
  const treasuryBefore = await chain.balanceOf(bench.treasury);
  await provider.send('evm_setAutomine', [false]);
  try {
    // Mined 1.5 s after the run starts, as a chain with blocks of its own mines it.
    const mined = setTimeout(() => void provider.send('evm_mine', []), 1_500);
    const report = await executeSweeps(bench.deps, { to: 'treasury', addresses: [soon.addressIn] });
    clearTimeout(mined);
    expect(report.moves).toEqual([expect.objectContaining({ addressIn: soon.addressIn, status: 'confirmed', signedNow: true })]);
    expect(await chain.balanceOf(bench.treasury)).toBe(treasuryBefore + BigInt(report.moves[0].amount));
    expect(await bench.sweepRows(soon.addressIn)).toMatchObject([{ txid: report.moves[0].txid, status: 'confirmed' }]);

    // Not mined within the wait: reported pending (sent, known to the node), and the next run records it mined.
    const pending = await executeSweeps({ ...bench.deps, fateWaitMs: 1_200 }, { to: 'treasury', addresses: [late.addressIn] });
    expect(pending.moves).toEqual([expect.objectContaining({ addressIn: late.addressIn, status: 'pending', signedNow: true })]);
    expect(await provider.getTransaction(pending.moves[0].txid)).not.toBeNull();
    expect(await bench.sweepRows(late.addressIn)).toMatchObject([{ txid: pending.moves[0].txid, status: 'open' }]);
    await provider.send('evm_mine', []);
    const next = await executeSweeps(bench.deps, { to: 'treasury', addresses: [late.addressIn] });
    expect(next.moves).toEqual([expect.objectContaining({ txid: pending.moves[0].txid, status: 'confirmed', signedNow: false })]);
    expect(await bench.sweepRows(late.addressIn)).toHaveLength(1);
  } finally {
    await provider.send('evm_setAutomine', [true]);
  }
});

test('a stored sweep the node refuses is reported pending with the refusal at once, not waited for, and never signed again', async () => {
  const { done, plan } = await storedSweep(49n, parseEther('1'));
  // The address is emptied after the bytes were signed and stored: the node refuses them (insufficient funds).
  await provider.send('anvil_setBalance', [done.addressIn, '0x0']);
  const t0 = Date.now();
  const report = await executeSweeps(bench.deps, { to: 'treasury', addresses: [done.addressIn] });
  expect(Date.now() - t0).toBeLessThan(10_000);
  expect(report.moves).toEqual([expect.objectContaining({ txid: plan.txidOut, status: 'pending', signedNow: false, note: expect.stringMatching(/^not accepted yet: /) })]);
  expect(await chain.balanceOf(done.addressIn)).toBe(0n);
  expect(await provider.getTransaction(plan.txidOut)).toBeNull();
  expect(await bench.sweepRows(done.addressIn)).toMatchObject([{ txid: plan.txidOut, status: 'open' }]);
});
