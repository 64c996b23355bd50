/**
 * The steps from finality on (activities/deposit.ts), each one effect of the lifecycle table, on a live
 * anvil and the real PostgreSQL: the reading only reads; the forward records processing, then signs, stores
 * and broadcasts, and run again (a worker lost mid-forward) re-sends the stored
 * bytes, never a second signature; a forward that cannot be made fails the attempt, nothing stored. With a
 * live head feed, the forward watches for its inclusion at each head announced after its broadcast (none
 * before it). The fee percent is chosen once, when the deposit is judged, and the forward takes its
 * commission by it; the confirmed snapshot is written in one place, once.
 */
import { Wallet, parseEther } from 'ethers';
import { eq, sql } from 'drizzle-orm';
import { createDepositActivities } from '../../activities/deposit';
import type { ChainAdapter, ObservedDeposit } from '../../src/chains/adapter';
import { loadPayment, recordDeposit } from '../../src/db/queries/payments';
import { planFromJson } from '../../activities/forward-support';
import { percentOf } from '../../src/domain/money';
import type { FeePolicy } from '../../src/domain/fees';
import { paymentConfigs, payments } from '../../src/db/schema';
import { dueHeight } from '../../src/domain/finality';
import { STANDARD_TIERS } from '../../src/domain/standard-tiers';
import { DEVNET_PRICES, FixedPriceSource } from '../../src/prices/source';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { headHub, openHeadFeed, type HeadFeed } from '../../src/detection/heads';
import { createTestDatabase } from '../helpers/db';
import { anvilChain, testSeed, tmpDir, type LiveChain } from '../helpers/nodes';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(120_000);

const REQUIRED = 3;
let chain: LiveChain;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let acts: ReturnType<typeof createDepositActivities>;
let node: AnvilDevnet;
let feed: HeadFeed | undefined;

/** The activities as the worker makes them; `heads` as its head feeds report to it. */
const STANDARD: FeePolicy = { domainOverrides: {}, tiers: [...STANDARD_TIERS] };
const activitiesWith = (heads?: ReturnType<typeof headHub>, adapter?: ChainAdapter, feePolicy: FeePolicy = STANDARD, prices = new FixedPriceSource(DEVNET_PRICES)) =>
  createDepositActivities({
    db: database.db,
    withLock: database.withLock,
    adapter: async () => adapter ?? chain.adapter,
    prices,
    feePolicy,
    treasuryAddress: () => undefined,
    ...(heads ? { heads } : {}),
  });

beforeAll(async () => {
  [node, database] = await Promise.all([startAnvil({ dir: tmpDir('gw-due-forward-') }), createTestDatabase()]);
  chain = await anvilChain('eth', testSeed(), node);
  acts = activitiesWith();
});

afterAll(async () => {
  feed?.close();
  await chain?.stop();
  await node?.stop();
  await database?.drop();
});

/** A real payment to a fresh address_in, recorded as the watcher records it. */
async function deposit(index: bigint, amount: bigint): Promise<{ uuid: string; observed: ObservedDeposit }> {
  const to = chain.adapter.deriveAddressIn(index);
  const from = await chain.adapter.head();
  const txid = await chain.pay(to, amount);
  const batch = await chain.adapter.scan(from, 100);
  const observed = batch.blocks.flatMap((b) => b.deposits).find((d) => d.txid === txid && d.recipient === to);
  if (!observed) throw new Error('deposit not found');
  const [config] = await database.db
    .insert(paymentConfigs)
    .values({
      ...callbackColumns(`https://shop.example/due/${index}`), ticker: 'eth', family: 'evm', addressIn: to, addressOut: Wallet.createRandom().address,
      derivationIndex: index, notifyPending: false, notifyConfirmations: REQUIRED, post: 0, json: 0, convert: 0, priority: 'default',
    })
    .returning();
  const { row: payment } = await recordDeposit(database.db, {
    configId: config.id, ticker: 'eth', network: 'ethereum', depositKey: `deposit:ethereum:${txid}:${observed.index}`, txidIn: txid, vout: null,
    blockNumber: observed.blockNumber, blockHash: observed.blockHash, valueBase: observed.amount, dueHeight: dueHeight('ethereum', observed.blockNumber, REQUIRED),
  });
  return { uuid: payment.uuid, observed };
}

/** A final deposit as the workflow leaves it before its forward: judged (its fee percent chosen), still pending. */
async function due(index: bigint, amount: bigint, acts0 = acts): Promise<string> {
  const { uuid, observed } = await deposit(index, amount);
  const { payment } = await loadPayment(database.db, uuid);
  await acts0.recordAndEvaluate({
    configId: payment.configId, network: 'ethereum', ticker: 'eth', txid: observed.txid, index: observed.index, recipient: observed.recipient,
    amount: observed.amount.toString(), blockNumber: observed.blockNumber.toString(), blockHash: observed.blockHash,
  });
  await chain.mine(REQUIRED - 1);
  return uuid;
}

test('the reading only reads; the step of its own that older histories took moves pending to processing, once', async () => {
  const { uuid } = await deposit(31n, parseEther('1'));
  expect(await acts.confirmations(uuid)).toEqual({ status: 'confirmed', confirmations: 1 });
  await chain.mine(REQUIRED - 1);
  expect(await acts.confirmations(uuid)).toEqual({ status: 'confirmed', confirmations: REQUIRED });
  expect((await loadPayment(database.db, uuid)).payment).toMatchObject({ result: 'pending', confirmations: REQUIRED, forwardRaw: null, txidOut: null });
  expect(await acts.recordProcessing(uuid)).toBe(true);
  expect(await acts.recordProcessing(uuid)).toBe(false);
  expect((await loadPayment(database.db, uuid)).payment).toMatchObject({ result: 'processing', forwardRaw: null });
});

test('the forward records processing and signs once; run again (a worker lost mid-forward) it re-sends the stored bytes, never a second signature', async () => {
  const uuid = await due(32n, parseEther('1'));
  expect((await loadPayment(database.db, uuid)).payment.result).toBe('pending');
  // A native coin's forward pays its own network fee, read as it signs: no sponsor cost is estimated first.
  const estimated: unknown[] = [];
  const adapter = new Proxy(chain.adapter, {
    get: (t, k: keyof ChainAdapter) => (k === 'estimateForwardCost' ? (...a: unknown[]) => void estimated.push(a) : typeof t[k] === 'function' ? (t[k] as () => unknown).bind(t) : t[k]),
  });
  const first = await activitiesWith(undefined, adapter).forward(uuid);
  expect(estimated).toEqual([]);
  // Signed and accepted a moment ago: pending without a reading of the node.
  expect(first.fate).toEqual({ status: 'pending', txidOut: first.txidOut, note: 'broadcast now' });
  const stored = (await loadPayment(database.db, uuid)).payment;
  expect(stored).toMatchObject({ result: 'processing', txidOut: first.txidOut });
  await chain.mine(1);
  const again = await acts.forward(uuid);
  expect(again).toEqual({ txidOut: first.txidOut, fate: { status: 'confirmed', txidOut: first.txidOut } });
  expect((await loadPayment(database.db, uuid)).payment.forwardRaw).toBe(stored.forwardRaw);
  expect(await database.db.select().from(payments).where(eq(payments.uuid, uuid))).toHaveLength(1);
  // The reading does not write the snapshot: that is the next effect's step.
  expect(await acts.forwardFate(uuid)).toEqual({ status: 'confirmed', txidOut: first.txidOut });
  expect((await loadPayment(database.db, uuid)).payment).toMatchObject({ result: 'processing', snapshot: null });
});

test('a forward that cannot be made fails the attempt (typed, no retry inside it); nothing is stored', async () => {
  // 1 wei cannot pay its own network fee.
  const { uuid } = await deposit(33n, 1n);
  await chain.mine(REQUIRED - 1);
  await expect(acts.forward(uuid)).rejects.toMatchObject({ nonRetryable: true });
  // Processing is recorded first (the deposit is past finality); the workflow then records the failure.
  expect((await loadPayment(database.db, uuid)).payment).toMatchObject({ result: 'processing', forwardRaw: null, txidOut: null });
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
    expect((await loadPayment(database.db, uuid)).payment.feePercent).toBe(percent);
    const later = activitiesWith(undefined, undefined, forwarded);
    await later.forward(uuid);
    const { payment } = await loadPayment(database.db, uuid);
    const plan = planFromJson(payment.forwardRaw!);
    const value = BigInt(payment.valueBase);
    expect(value - plan.forwarded - plan.networkFee).toBe(percentOf(value, percent));
    await chain.mine(1);
    expect((await later.confirmedSnapshot(uuid)).fee_percent).toBe(percent);
    expect((await loadPayment(database.db, uuid)).payment.feePercent).toBe(percent);
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
    await chain.mine(1);
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
    const { payment } = await loadPayment(database.db, uuid);
    const plan = planFromJson(payment.forwardRaw!);
    expect(payment).toMatchObject({ result: 'sent', snapshot: snap, price: snap.price, forwardedBase: plan.forwarded.toString() });
    expect(snap).toMatchObject({ uuid, txid_out: sent.txidOut, fee_percent: payment.feePercent });
    expect(BigInt(payment.feeBase)).toBe(BigInt(payment.valueBase) - plan.forwarded);
  });
});

/** forward_watch_until, and the database's clock now, in ms. */
async function watchWindow(uuid: string): Promise<{ until: number | null; now: number }> {
  const { rows } = (await database.db.execute(sql`SELECT forward_watch_until AS until, now() AS now FROM payments WHERE uuid = ${uuid}`)) as unknown as {
    rows: Array<{ until: string | Date | null; now: string | Date }>;
  };
  return { until: rows[0].until === null ? null : new Date(rows[0].until).getTime(), now: new Date(rows[0].now).getTime() };
}

test('with a live head feed, the forward is read at the head that mines it: confirmed, in the same activity', async () => {
  const hub = headHub(4000);
  // anvil's own newHeads over its WebSocket, as the worker's feed reports them.
  const subscribed = new Promise<void>((resolve) => {
    feed = openHeadFeed('ethereum', node.rpcUrl.replace(/^http/, 'ws'), () => hub.head('ethereum'), {
      onState: (state) => {
        hub.live('ethereum', state === 'subscribed');
        if (state === 'subscribed') resolve();
      },
    });
  });
  await subscribed;
  const watching = activitiesWith(hub);
  const uuid = await due(34n, parseEther('1'));
  const started = Date.now();
  const { txidOut, fate } = await watching.forward(uuid);
  const took = Date.now() - started;
  // anvil mines the forward as it takes it; its head comes at once, and the reading there finds it.
  expect(fate).toEqual({ status: 'confirmed', txidOut });
  expect(took).toBeLessThan(4000);
  // The watcher holds its hint back for the window, from the database's clock.
  const w = await watchWindow(uuid);
  expect(w.until).not.toBeNull();
  expect(w.until! - w.now).toBeGreaterThan(4000 - took - 1000);
  expect(w.until! - w.now).toBeLessThanOrEqual(4000);
});

test('a forward mined while no head is announced is found by the reading after the window', async () => {
  // A feed that is live but says nothing (a node that stopped announcing): the window's end reads.
  const hub = headHub(400);
  hub.live('ethereum', true);
  const watching = activitiesWith(hub);
  const uuid = await due(35n, parseEther('1'));
  const started = Date.now();
  const sent = await watching.forward(uuid);
  expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  expect(sent.fate).toEqual({ status: 'confirmed', txidOut: sent.txidOut });
  // Its window has passed: a later block holding it would be hinted again.
  const w = await watchWindow(uuid);
  expect(w.until).toBeLessThanOrEqual(w.now);
});

test('the watch reads at a head announced after the broadcast, not at one announced while the forward was signed', async () => {
  // Heads announced by the test: one while the forward is prepared under its lock, one 300 ms after the
  // broadcast. anvil mines the forward at once; the only reading is the one at the second head.
  const hub = headHub(3000);
  hub.live('ethereum', true);
  let readings = 0;
  let broadcastAt = 0;
  const a = chain.adapter;
  const adapter: ChainAdapter = Object.assign(Object.create(a) as ChainAdapter, {
    prepareForward: async (...args: Parameters<ChainAdapter['prepareForward']>) => {
      const plan = await a.prepareForward(...args);
      hub.head('ethereum');
      return plan;
    },
    broadcast: async (...args: Parameters<ChainAdapter['broadcast']>) => {
      await a.broadcast(...args);
      broadcastAt = Date.now();
      setTimeout(() => hub.head('ethereum'), 300);
    },
    forwardStatus: (...args: Parameters<ChainAdapter['forwardStatus']>) => {
      readings++;
      return a.forwardStatus(...args);
    },
  });
  const watching = activitiesWith(hub, adapter);
  const uuid = await due(37n, parseEther('1'));
  const sent = await watching.forward(uuid);
  const waited = Date.now() - broadcastAt;
  expect(sent.fate).toEqual({ status: 'confirmed', txidOut: sent.txidOut });
  expect(readings).toBe(1);
  // Woken by the head after the broadcast, well before the window's end.
  expect(waited).toBeGreaterThanOrEqual(300);
  expect(waited).toBeLessThan(3000);
});

test('without a live head feed nothing is watched: pending, broadcast now, and no window', async () => {
  const hub = headHub(4000);
  const watching = activitiesWith(hub);
  const uuid = await due(36n, parseEther('1'));
  const sent = await watching.forward(uuid);
  expect(sent.fate).toEqual({ status: 'pending', txidOut: sent.txidOut, note: 'broadcast now' });
  expect((await watchWindow(uuid)).until).toBeNull();
});

test('an eligible deposit recorded has its forward key derived while it waits for finality; an ineligible one does not', async () => {
  const kept: bigint[] = [];
  const a = chain.adapter;
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
    const to = chain.adapter.deriveAddressIn(index);
    const from = await chain.adapter.head();
    const txid = await chain.pay(to, amount);
    const observed = (await chain.adapter.scan(from, 100)).blocks.flatMap((b) => b.deposits).find((d) => d.txid === txid && d.recipient === to)!;
    const [config] = await database.db
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
