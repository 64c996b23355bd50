/**
 * confirmationsThenForward (activities/deposit.ts) on a live anvil and the
 * real PostgreSQL: a reading below the required confirmations forwards nothing; the reading that finds the
 * deposit final signs, stores and broadcasts the forward in the same step; the step run again (a worker lost
 * after the forward was stored) re-sends the stored bytes even when its reading lags, never a second
 * signature; a forward that cannot be made is returned as an error, not thrown. With a live head feed, the
 * step watches for the forward's inclusion at each head announced after its broadcast (none before it).
 */
import { Wallet, parseEther } from 'ethers';
import { eq, sql } from 'drizzle-orm';
import { createDepositActivities } from '../../activities/deposit';
import type { ChainAdapter, ObservedDeposit } from '../../src/chains/adapter';
import { loadPayment, moveResult, recordDeposit } from '../../src/db/queries/payments';
import { paymentConfigs, payments } from '../../src/db/schema';
import { dueHeight } from '../../src/domain/finality';
import { STANDARD_TIERS } from '../../src/domain/pricing';
import { DEVNET_PRICES, FixedPriceSource } from '../../src/prices/source';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { headHub, openHeadFeed, type HeadFeed } from '../../src/detection/heads';
import { createTestDatabase } from '../helpers/db';
import { anvilChain, testSeed, tmpDir, type LiveChain } from '../helpers/nodes';

jest.setTimeout(120_000);

const REQUIRED = 3;
let chain: LiveChain;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let acts: ReturnType<typeof createDepositActivities>;
let node: AnvilDevnet;
let feed: HeadFeed | undefined;

/** The activities as the worker makes them; `heads` as its head feeds report to it. */
const activitiesWith = (heads?: ReturnType<typeof headHub>, adapter?: ChainAdapter) =>
  createDepositActivities({
    db: database.db,
    withLock: database.withLock,
    adapter: async () => adapter ?? chain.adapter,
    prices: new FixedPriceSource(DEVNET_PRICES),
    feePolicy: { domainOverrides: {}, tiers: [...STANDARD_TIERS] },
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
      callbackUrl: `https://shop.example/due/${index}`, ticker: 'eth', family: 'evm', addressIn: to, addressOut: Wallet.createRandom().address,
      derivationIndex: index, notifyPending: false, notifyConfirmations: REQUIRED, post: 0, json: 0, convert: 0, priority: 'default',
    })
    .returning();
  const { row: payment } = await recordDeposit(database.db, {
    configId: config.id, ticker: 'eth', network: 'ethereum', depositKey: `deposit:ethereum:${txid}:${observed.index}`, txidIn: txid, vout: null,
    blockNumber: observed.blockNumber, blockHash: observed.blockHash, valueBase: observed.amount, dueHeight: dueHeight('ethereum', observed.blockNumber, REQUIRED),
  });
  return { uuid: payment.uuid, observed };
}

test('below the required confirmations it only reads; the reading that finds finality forwards in the same step, once', async () => {
  const { uuid } = await deposit(31n, parseEther('1'));
  const early = await acts.confirmationsThenForward(uuid);
  expect(early).toEqual({ reading: { status: 'confirmed', confirmations: 1 } });
  expect((await loadPayment(database.db, uuid)).payment).toMatchObject({ result: 'pending', forwardRaw: null, txidOut: null });

  await chain.mine(REQUIRED - 1);
  const due = await acts.confirmationsThenForward(uuid);
  expect(due.reading).toEqual({ status: 'confirmed', confirmations: REQUIRED });
  if (!due.forward || !('sent' in due.forward)) throw new Error(`no forward: ${JSON.stringify(due.forward)}`);
  const { txidOut } = due.forward.sent;
  // Signed and accepted a moment ago: pending without a reading of the node (the watcher's hint or the
  // workflow's reading finds it mined), even where anvil mined it at once.
  expect(due.forward.sent.fate).toEqual({ status: 'pending', txidOut, note: 'broadcast now' });
  const stored = (await loadPayment(database.db, uuid)).payment;
  expect(stored).toMatchObject({ result: 'processing', txidOut });

  // The step run again: the stored bytes are re-sent; no second plan, no second txid.
  await chain.mine(1);
  const again = await acts.confirmationsThenForward(uuid);
  expect(again.forward).toMatchObject({ sent: { txidOut, fate: { status: 'confirmed', txidOut } } });
  expect((await loadPayment(database.db, uuid)).payment.forwardRaw).toBe(stored.forwardRaw);
  const rows = await database.db.select().from(payments).where(eq(payments.uuid, uuid));
  expect(rows).toHaveLength(1);
  // Run again once sent (its snapshot written), with a reading below the requirement (raised here to stand
  // for a node that lags): still the stored bytes, never a verdict of "not final".
  await acts.confirmedSnapshot(uuid);
  const sent = await loadPayment(database.db, uuid);
  expect(sent.payment.result).toBe('sent');
  await database.db.update(paymentConfigs).set({ notifyConfirmations: 1000 }).where(eq(paymentConfigs.id, sent.config.id));
  const lagging = await acts.confirmationsThenForward(uuid);
  expect(lagging.reading.confirmations).toBeLessThan(1000);
  expect(lagging.forward).toMatchObject({ sent: { txidOut, fate: { status: 'confirmed', txidOut } } });
});

test('a payment already processing (an earlier attempt of the step found it final) is forwarded whatever a lagging reading says', async () => {
  const { uuid } = await deposit(32n, parseEther('1'));
  expect(await moveResult(database.db, uuid, ['pending'], 'processing')).toBe(true);
  const r = await acts.confirmationsThenForward(uuid);
  expect(r.reading).toEqual({ status: 'confirmed', confirmations: 1 });
  expect(r.forward).toMatchObject({ sent: { txidOut: expect.stringMatching(/^0x[0-9a-f]{64}$/) } });
  await chain.mine(1);
  const { payment } = await loadPayment(database.db, uuid);
  expect(payment.txidOut).toBe((r.forward as { sent: { txidOut: string } }).sent.txidOut);
  expect((await acts.forwardFate(uuid)).status).toBe('confirmed');
});

test('a forward that cannot be made is returned as an error with the reading, not thrown: the workflow forwards again', async () => {
  // 1 wei cannot pay its own network fee.
  const { uuid } = await deposit(33n, 1n);
  await chain.mine(REQUIRED - 1);
  const r = await acts.confirmationsThenForward(uuid);
  expect(r.reading).toEqual({ status: 'confirmed', confirmations: REQUIRED });
  expect(r.forward).toEqual({ error: expect.any(String) });
  expect((await loadPayment(database.db, uuid)).payment).toMatchObject({ forwardRaw: null, txidOut: null });
  // The workflow's own forward step meets the same refusal as a permanent failure.
  await expect(acts.forward(uuid, { processing: true, fate: true })).rejects.toMatchObject({ nonRetryable: true });
});

/** forward_watch_until, and the database's clock now, in ms. */
async function watchWindow(uuid: string): Promise<{ until: number | null; now: number }> {
  const { rows } = (await database.db.execute(sql`SELECT forward_watch_until AS until, now() AS now FROM payments WHERE uuid = ${uuid}`)) as unknown as {
    rows: Array<{ until: string | Date | null; now: string | Date }>;
  };
  return { until: rows[0].until === null ? null : new Date(rows[0].until).getTime(), now: new Date(rows[0].now).getTime() };
}

test('with a live head feed, the forward is read at the head that mines it: confirmed, its snapshot written, in the same step', async () => {
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
  const { uuid } = await deposit(34n, parseEther('1'));
  await chain.mine(REQUIRED - 1);
  const started = Date.now();
  const due = await watching.confirmationsThenForward(uuid);
  const took = Date.now() - started;
  if (!due.forward || !('sent' in due.forward)) throw new Error(`no forward: ${JSON.stringify(due.forward)}`);
  const { txidOut, fate, snapshot } = due.forward.sent;
  // anvil mines the forward as it takes it; its head comes at once, and the reading there finds it.
  expect(fate).toEqual({ status: 'confirmed', txidOut });
  expect(snapshot).toMatchObject({ uuid, txid_out: txidOut });
  expect(took).toBeLessThan(4000);
  expect((await loadPayment(database.db, uuid)).payment.result).toBe('sent');
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
  const { uuid } = await deposit(35n, parseEther('1'));
  await chain.mine(REQUIRED - 1);
  const started = Date.now();
  const due = await watching.confirmationsThenForward(uuid);
  expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  if (!due.forward || !('sent' in due.forward)) throw new Error(`no forward: ${JSON.stringify(due.forward)}`);
  expect(due.forward.sent.fate).toEqual({ status: 'confirmed', txidOut: due.forward.sent.txidOut });
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
  const { uuid } = await deposit(37n, parseEther('1'));
  await chain.mine(REQUIRED - 1);
  const due = await watching.confirmationsThenForward(uuid);
  const waited = Date.now() - broadcastAt;
  if (!due.forward || !('sent' in due.forward)) throw new Error(`no forward: ${JSON.stringify(due.forward)}`);
  expect(due.forward.sent.fate).toEqual({ status: 'confirmed', txidOut: due.forward.sent.txidOut });
  expect(readings).toBe(1);
  // Woken by the head after the broadcast, well before the window's end.
  expect(waited).toBeGreaterThanOrEqual(300);
  expect(waited).toBeLessThan(3000);
});

test('without a live head feed nothing is watched: pending, broadcast now, and no window', async () => {
  const hub = headHub(4000);
  const watching = activitiesWith(hub);
  const { uuid } = await deposit(36n, parseEther('1'));
  await chain.mine(REQUIRED - 1);
  const due = await watching.confirmationsThenForward(uuid);
  if (!due.forward || !('sent' in due.forward)) throw new Error(`no forward: ${JSON.stringify(due.forward)}`);
  expect(due.forward.sent.fate).toEqual({ status: 'pending', txidOut: due.forward.sent.txidOut, note: 'broadcast now' });
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
        callbackUrl: `https://shop.example/keep/${index}`, ticker: 'eth', family: 'evm', addressIn: to, addressOut: Wallet.createRandom().address,
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
