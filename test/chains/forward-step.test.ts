/**
 * The steps from finality on (activities/deposit.ts), each one effect of the lifecycle table, on a live
 * anvil and the real PostgreSQL: the reading only reads; the forward records processing, then signs, stores
 * and broadcasts, and run again (a worker lost mid-forward) re-sends the stored bytes, never a second
 * signature; a forward that cannot be made fails the attempt, nothing stored. The fee percent is chosen
 * once, when the deposit is judged, and the forward takes its commission by it; the confirmed snapshot is
 * written in one place, once. The forward's watch for its inclusion: forward-watch.test.ts.
 */
import { Wallet, parseEther } from 'ethers';
import { eq } from 'drizzle-orm';
import type { ChainAdapter } from '../../src/chains/adapter';
import { loadPayment } from '../../src/db/queries/payments';
import { planFromJson } from '../../activities/forward-support';
import { percentOf } from '../../src/domain/money';
import type { FeePolicy } from '../../src/domain/fees';
import { paymentConfigs, payments } from '../../src/db/schema';
import { DEVNET_PRICES, FixedPriceSource } from '../../src/prices/source';
import { dueForwardBed, REQUIRED, STANDARD } from '../helpers/due-forward';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(120_000);

const bed = dueForwardBed();
const { deposit, due, activitiesWith } = bed;
let acts: ReturnType<typeof activitiesWith>;
beforeAll(() => {
  acts = activitiesWith();
});

test('the reading only reads; the step of its own that older histories took moves pending to processing, once', async () => {
  const { uuid } = await deposit(31n, parseEther('1'));
  expect(await acts.confirmations(uuid)).toEqual({ status: 'confirmed', confirmations: 1 });
  await bed.chain.mine(REQUIRED - 1);
  expect(await acts.confirmations(uuid)).toEqual({ status: 'confirmed', confirmations: REQUIRED });
  expect((await loadPayment(bed.database.db, uuid)).payment).toMatchObject({ result: 'pending', confirmations: REQUIRED, forwardRaw: null, txidOut: null });
  expect(await acts.recordProcessing(uuid)).toBe(true);
  expect(await acts.recordProcessing(uuid)).toBe(false);
  expect((await loadPayment(bed.database.db, uuid)).payment).toMatchObject({ result: 'processing', forwardRaw: null });
});

test('the forward records processing and signs once; run again (a worker lost mid-forward) it re-sends the stored bytes, never a second signature', async () => {
  const uuid = await due(32n, parseEther('1'));
  expect((await loadPayment(bed.database.db, uuid)).payment.result).toBe('pending');
  // A native coin's forward pays its own network fee, read as it signs: no sponsor cost is estimated first.
  const estimated: unknown[] = [];
  const adapter = new Proxy(bed.chain.adapter, {
    get: (t, k: keyof ChainAdapter) => (k === 'estimateForwardCost' ? (...a: unknown[]) => void estimated.push(a) : typeof t[k] === 'function' ? (t[k] as () => unknown).bind(t) : t[k]),
  });
  const first = await activitiesWith(undefined, adapter).forward(uuid);
  expect(estimated).toEqual([]);
  // Signed and accepted a moment ago: pending without a reading of the node.
  expect(first.fate).toEqual({ status: 'pending', txidOut: first.txidOut, note: 'broadcast now' });
  const stored = (await loadPayment(bed.database.db, uuid)).payment;
  expect(stored).toMatchObject({ result: 'processing', txidOut: first.txidOut });
  await bed.chain.mine(1);
  const again = await acts.forward(uuid);
  expect(again).toEqual({ txidOut: first.txidOut, fate: { status: 'confirmed', txidOut: first.txidOut } });
  expect((await loadPayment(bed.database.db, uuid)).payment.forwardRaw).toBe(stored.forwardRaw);
  expect(await bed.database.db.select().from(payments).where(eq(payments.uuid, uuid))).toHaveLength(1);
  // The reading does not write the snapshot: that is the next effect's step.
  expect(await acts.forwardFate(uuid)).toEqual({ status: 'confirmed', txidOut: first.txidOut });
  expect((await loadPayment(bed.database.db, uuid)).payment).toMatchObject({ result: 'processing', snapshot: null });
});

test('a forward that cannot be made fails the attempt (typed, no retry inside it); nothing is stored', async () => {
  // 1 wei cannot pay its own network fee.
  const { uuid } = await deposit(33n, 1n);
  await bed.chain.mine(REQUIRED - 1);
  await expect(acts.forward(uuid)).rejects.toMatchObject({ nonRetryable: true });
  // Processing is recorded first (the deposit is past finality); the workflow then records the failure.
  expect((await loadPayment(bed.database.db, uuid)).payment).toMatchObject({ result: 'processing', forwardRaw: null, txidOut: null });
});

describe('the fee percent is chosen once, when the deposit is judged, and the forward takes its commission by it', () => {
  // [what the host's fee is when judged, what it is when forwarded, the percent the payment keeps]
  const cases: Array<[string, FeePolicy, FeePolicy, string]> = [
    ['standard, then an override of 0.50', STANDARD, { ...STANDARD, domainOverrides: { 'shop.example': '0.50' } }, '1.00'],
    ['an override of 0.50, then standard', { ...STANDARD, domainOverrides: { 'shop.example': '0.50' } }, STANDARD, '0.50'],
    ['an override of 2.00, then 0.25', { ...STANDARD, domainOverrides: { 'shop.example': '2.00' } }, { ...STANDARD, domainOverrides: { 'shop.example': '0.25' } }, '2.00'],
  ];
  let index = 50n;
  it.each(cases)('%s → %s', async (_name, judged, forwarded, percent) => {
    const uuid = await due(index++, parseEther('1'), activitiesWith(undefined, undefined, judged));
    expect((await loadPayment(bed.database.db, uuid)).payment.feePercent).toBe(percent);
    const later = activitiesWith(undefined, undefined, forwarded);
    await later.forward(uuid);
    const { payment } = await loadPayment(bed.database.db, uuid);
    const plan = planFromJson(payment.forwardRaw!);
    const value = BigInt(payment.valueBase);
    expect(value - plan.forwarded - plan.networkFee).toBe(percentOf(value, percent));
    await bed.chain.mine(1);
    expect((await later.confirmedSnapshot(uuid)).fee_percent).toBe(percent);
    expect((await loadPayment(bed.database.db, uuid)).payment.feePercent).toBe(percent);
  });
});

describe('the confirmed snapshot is written in one place, once', () => {
  // [the case, how the snapshot is asked for, the price the second ask sees]
  const cases: Array<[string, 'once' | 'twice' | 'at-once', string]> = [
    ['written by the first ask, with the forward that landed, the price and the move to sent', 'once', '1.00'],
    ['asked again with another price (a later run): the first one stands', 'twice', '9999.00'],
    ['asked by two runs at once: both answer the same snapshot', 'at-once', '9999.00'],
  ];
  let index = 60n;
  it.each(cases)('%s', async (_name, how, laterPrice) => {
    const uuid = await due(index++, parseEther('1'));
    const sent = await acts.forward(uuid);
    await bed.chain.mine(1);
    const later = activitiesWith(undefined, undefined, STANDARD, new FixedPriceSource({ ...DEVNET_PRICES, ETH: laterPrice }));
    let snap;
    if (how === 'at-once') {
      const [a, b] = await Promise.all([acts.confirmedSnapshot(uuid), later.confirmedSnapshot(uuid)]);
      expect(b).toEqual(a);
      snap = a;
    } else {
      snap = await acts.confirmedSnapshot(uuid);
      if (how === 'twice') expect(await later.confirmedSnapshot(uuid)).toEqual(snap);
    }
    const { payment } = await loadPayment(bed.database.db, uuid);
    const plan = planFromJson(payment.forwardRaw!);
    expect(payment).toMatchObject({ result: 'sent', snapshot: snap, price: snap.price, forwardedBase: plan.forwarded.toString() });
    expect(snap).toMatchObject({ uuid, txid_out: sent.txidOut, fee_percent: payment.feePercent });
    expect(BigInt(payment.feeBase)).toBe(BigInt(payment.valueBase) - plan.forwarded);
  });
});

test('an eligible deposit recorded has its forward key derived while it waits for finality; an ineligible one does not', async () => {
  const kept: bigint[] = [];
  const a = bed.chain.adapter;
  const keeping: ChainAdapter = Object.assign(Object.create(a) as ChainAdapter, {
    keepSigningKey: (index: bigint) => {
      kept.push(index);
      a.keepSigningKey?.(index);
    },
  });
  const failing: ChainAdapter = Object.assign(Object.create(a) as ChainAdapter, {
    keepSigningKey: () => {
      throw new Error('no key today');
    },
  });
  const record = async (index: bigint, amount: bigint, adapter: ChainAdapter) => {
    const to = bed.chain.adapter.deriveAddressIn(index);
    const from = await bed.chain.adapter.head();
    const txid = await bed.chain.pay(to, amount);
    const observed = (await bed.chain.adapter.scan(from, 100)).blocks.flatMap((b) => b.deposits).find((d) => d.txid === txid && d.recipient === to)!;
    const [config] = await bed.database.db
      .insert(paymentConfigs)
      .values({
        ...callbackColumns(`https://shop.example/keep/${index}`), ticker: 'eth', family: 'evm', addressIn: to, addressOut: Wallet.createRandom().address,
        derivationIndex: index, notifyPending: false, notifyConfirmations: REQUIRED, post: 0, json: 0, convert: 0, priority: 'default',
        minimumTransactionBase: parseEther('0.01').toString(),
      })
      .returning();
    return activitiesWith(undefined, adapter).recordAndEvaluate({
      configId: config.id, network: 'ethereum', ticker: 'eth', txid, index: observed.index, recipient: to,
      amount: observed.amount.toString(), blockNumber: observed.blockNumber.toString(), blockHash: observed.blockHash,
    });
  };
  expect((await record(41n, parseEther('1'), keeping)).evaluation.eligible).toBe(true);
  expect(kept).toEqual([41n]);
  expect((await record(42n, 1000n, keeping)).evaluation.eligible).toBe(false);
  expect(kept).toEqual([41n]);
  // A key that cannot be derived now fails nothing: the forward derives it when due.
  expect((await record(43n, parseEther('1'), failing)).evaluation.eligible).toBe(true);
});
