import crypto from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { loadSigner } from '../../src/callbacks/signer';
import type { CallbackSnapshot } from '../../src/callbacks/types';
import { chainSignal, resendUpdate, type PaymentStatus } from '../../workflows/signals';
import { createTestDatabase } from '../helpers/db';
import { createTimeSkippingEnv, gatewayWorkflows } from '../helpers/temporal';
import { btcSnapshot } from './fixtures/payload';
import { waitFor } from '../helpers/process';
import { expectSignatureVerifies } from './helpers/openssl';
import { fieldsOf, startReceiver, type Recorded, type Reply } from './helpers/receiver';
import { scriptedChain, type Deposit } from './helpers/scripted-chain';
import { attemptsOf, paymentOf, seedPayment } from './helpers/seed';

/**
 * The callback stages as production runs them: the payment workflow (workflows/payment.ts) with the real
 * delivery activities against PostgreSQL and a real receiver, on the time-skipping server. The chain
 * and forward activities are scripted: a deposit is final when the test says so (`confirm`).
 */
const MIN = 60_000;
const taskQueue = 'callbacks-delivery';
const signer = loadSigner({
  dataDir: '/nonexistent',
  signingKeyFile: undefined,
  signingKeyPem: crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
});

let env: TestWorkflowEnvironment;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let worker: Worker;
let running: Promise<void>;
let publicPem: string;
const receivers: Array<{ close(): Promise<void> }> = [];

/** The scripted chain side; the database moves as the real activities would move it. */
const { chain, deposits } = scriptedChain(() => database.db);

beforeAll(async () => {
  [env, database] = await Promise.all([createTimeSkippingEnv(), createTestDatabase()]);
  publicPem = (await signer.publicKeyPem())!;
  const real = createActivities({ db: database.db, signer, config: { callbackAllowPrivate: true, callbackAllowHttp: true, callbackTimeoutMs: 5000 } });
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    ...(await gatewayWorkflows()),
    activities: { ...chain, deliverCallbackAttempt: real.deliverCallbackAttempt },
  });
  running = worker.run();
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  worker?.shutdown();
  await running;
  await env?.teardown();
  await database?.drop();
});

/** A real listener on 127.0.0.1 that stamps each request with the test server's virtual time. */
async function receiver(reply: (n: number, req: Recorded) => Reply | Promise<Reply>) {
  const r = await startReceiver(reply, () => env.currentTimeMs());
  receivers.push(r);
  return r;
}

const expectVerified = (r: Recorded) => expectSignatureVerifies(r, publicPem);

/** Starts the payment workflow of a seeded payment; its chain readings come from `deposits`. */
function start(d: Deposit): Promise<WorkflowHandle> {
  deposits.set(d.paymentUuid, { ...d, final: !d.awaitConfirmed });
  const input = {
    configId: crypto.randomUUID(), network: 'bitcoin', ticker: 'btc', txid: d.paymentUuid, index: 0, recipient: btcSnapshot.address_in,
    amount: '1000000', blockNumber: '1', blockHash: '00',
  };
  const opts = { fallback: '1 day', ...(d.resendWindow ? { resendWindow: d.resendWindow } : {}) };
  return env.client.workflow.start('paymentLifecycle', { taskQueue, workflowId: `deposit:bitcoin:${d.paymentUuid}:0`, args: [input, opts] });
}

/** The deposit reaches finality: the scripted chain says so and the watcher's hint arrives. */
async function confirm(handle: WorkflowHandle, uuid: string, snapshot: CallbackSnapshot): Promise<void> {
  Object.assign(deposits.get(uuid)!, { final: true, confirmed: snapshot });
  await handle.signal(chainSignal, { kind: 'due', height: '2' });
}

const statusOf = async (handle: WorkflowHandle) => (await handle.query<PaymentStatus>('status')).delivery;

type Stage = PaymentStatus['delivery']['pending'];
interface Result {
  pending: Stage;
  confirmed: Stage;
  delivered: boolean;
}
async function resultOf(handle: WorkflowHandle): Promise<Result> {
  const status = (await handle.result()) as PaymentStatus;
  return { pending: status.delivery.pending, confirmed: status.delivery.confirmed, delivered: status.delivery.confirmed.state === 'delivered' };
}

/** Determinism: the recorded history replays on a fresh bundle without a nondeterminism error. */
async function expectReplays(handle: WorkflowHandle): Promise<void> {
  const history = await handle.fetchHistory();
  await expect(Worker.runReplayHistory(await gatewayWorkflows(), history)).resolves.toBeUndefined();
}

async function run(d: Deposit): Promise<Result> {
  return resultOf(await start(d));
}

describe('six-attempt delivery on the time-skipping server', () => {
  it('an always-failing receiver gets exactly six requests at 0, 5, 20, 50, 110 and 230 minutes', async () => {
    const rx = await receiver(() => ({ status: 500, body: 'down' }));
    const { uuid, snapshot } = await seedPayment(database.db, { callbackUrl: rx.url('/always-fails?order=1'), post: 1, json: 1 });
    const result = await run({ paymentUuid: uuid, confirmed: snapshot, resendWindow: '1 minute' });

    expect(result.delivered).toBe(false);
    expect(result.confirmed).toMatchObject({ state: 'exhausted', attempts: 6 });
    expect(rx.requests).toHaveLength(6);
    const t0 = rx.requests[0].at!;
    const offsets = rx.requests.map((r) => (r.at! - t0) / MIN);
    const expected = [0, 5, 20, 50, 110, 230];
    offsets.forEach((o, i) => {
      expect(o).toBeGreaterThanOrEqual(expected[i]);
      // The only extra is real time spent inside attempts (seconds).
      expect(o).toBeLessThan(expected[i] + 1);
    });
    // Retries carry the same snapshot: byte-identical bodies; only timestamp and signature change.
    for (const r of rx.requests) {
      expect(r.rawBody.equals(rx.requests[0].rawBody)).toBe(true);
      expect(r.url).toBe('/always-fails?order=1');
      expectVerified(r);
    }
    expect(fieldsOf(rx.requests[0])).toMatchObject({ uuid, result: 'sent', pending: 0 });

    const rows = await attemptsOf(database.db, uuid);
    expect(rows.map((r) => [r.stage, r.attempt, r.responseStatus, r.pending, r.confirmed])).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => ['confirmed', n, 500, n < 6 ? 1 : 0, 0]),
    );
    expect(rows.map((r) => r.responseBody)).toEqual(Array(6).fill('down'));
    expect(rows[5].nextTry).toBeNull();
    [5, 15, 30, 60, 120].forEach((m, i) => {
      const gap = rows[i].nextTry!.getTime() - rows[i].createdAt.getTime();
      expect(gap).toBeGreaterThanOrEqual(m * MIN - 5000);
      expect(gap).toBeLessThanOrEqual(m * MIN + 5000);
    });
    expect(rows[0].requestUrl).toBe(rx.url('/always-fails?order=1'));
    expect((await paymentOf(database.db, uuid)).result).toBe('sent');
  });

  it('a receiver answering 204 then 200 gets two requests and the payment ends done (GET transport)', async () => {
    const rx = await receiver((n) => (n === 0 ? { status: 204 } : { status: 200, body: '<html>thanks</html>' }));
    const { uuid, snapshot } = await seedPayment(database.db, { callbackUrl: rx.url('/shop/cb?order=42&token=a%2Bb#top'), post: 0, json: 0 });
    const result = await run({ paymentUuid: uuid, confirmed: snapshot });

    expect(result.delivered).toBe(true);
    expect(result.confirmed).toMatchObject({ state: 'delivered', attempts: 2 });
    expect(rx.requests).toHaveLength(2);
    expect((rx.requests[1].at! - rx.requests[0].at!) / MIN).toBeGreaterThanOrEqual(5);
    for (const r of rx.requests) {
      expect(r.method).toBe('GET');
      expect(r.rawBody.length).toBe(0);
      expect(r.url.startsWith('/shop/cb?order=42&token=a%2Bb&uuid=')).toBe(true);
      expect(r.url).toBe(rx.requests[0].url);
      expectVerified(r);
    }
    expect(fieldsOf(rx.requests[0])).toMatchObject({ uuid, result: 'sent', pending: '0', vout: '1' });
    const rows = await attemptsOf(database.db, uuid);
    expect(rows.map((r) => [r.attempt, r.responseStatus, r.pending, r.confirmed, r.nextTry === null])).toEqual([[1, 204, 1, 0, false], [2, 200, 0, 1, true]]);
    expect(rows[1].responseBody).toBe('<html>thanks</html>');
    expect(rows[0].requestUrl).toBe(`http://127.0.0.1:${rx.port}${rx.requests[0].url}`);
    const payment = await paymentOf(database.db, uuid);
    expect(payment.result).toBe('done');
    expect(payment.lastUpdate).not.toBeNull();
    expect(payment.snapshot).toEqual(snapshot);
  });

  it('the confirmed stage starting while a pending retry waits: no pending request is sent after it', async () => {
    let confirmedSeen = 0;
    const rx = await receiver((_n, r) => {
      if (fieldsOf(r).result === 'pending') return { status: 500 };
      confirmedSeen++;
      return confirmedSeen < 4 ? { status: 503 } : { status: 200 };
    });
    const { uuid, snapshot } = await seedPayment(database.db, { callbackUrl: rx.url('/pending-then-confirmed'), result: 'pending' });
    const handle = await start({ paymentUuid: uuid, pending: snapshot, awaitConfirmed: true });
    await waitFor(() => rx.requests.length === 1, 30_000, 'pending attempt 1');
    await env.sleep(6 * MIN);
    await waitFor(() => rx.requests.length === 2, 30_000, 'pending attempt 2');
    await waitFor(async () => (await statusOf(handle)).pending.state === 'waiting', 30_000, 'pending retry scheduled');
    const status = await statusOf(handle);
    expect(status.pending).toMatchObject({ state: 'waiting', attempts: 2, lastStatus: 500 });
    expect(status.pending.nextTryAt).toBeGreaterThan(await env.currentTimeMs());

    await confirm(handle, uuid, snapshot);
    const result = await resultOf(handle);

    // Confirmed ran 0, 5, 20, 50 minutes: pending attempts 3 (+15) and 4 (+30) would have fallen inside.
    expect(result.pending.state).toBe('cancelled');
    expect(result.confirmed).toMatchObject({ state: 'delivered', attempts: 4 });
    const stages = rx.requests.map((r) => fieldsOf(r).result);
    expect(stages).toEqual(['pending', 'pending', 'sent', 'sent', 'sent', 'sent']);
    expect(rx.requests[5].at! - rx.requests[2].at!).toBeGreaterThanOrEqual(50 * MIN);
    rx.requests.forEach(expectVerified);
    expect(rx.requests[0].rawBody.equals(rx.requests[1].rawBody)).toBe(true);
    expect(fieldsOf(rx.requests[0])).toMatchObject({ result: 'pending', pending: 1, txid_out: null, fee: '0.00' });
    const rows = await attemptsOf(database.db, uuid);
    expect(rows.map((r) => [r.stage, r.attempt])).toEqual([['pending', 1], ['pending', 2], ['confirmed', 1], ['confirmed', 2], ['confirmed', 3], ['confirmed', 4]]);
    expect((await paymentOf(database.db, uuid)).result).toBe('done');
    await expectReplays(handle);
  });

  it('a pending attempt in flight when the confirmed stage begins ends before the first confirmed request', async () => {
    const marks: Array<[string, number]> = [];
    const ctx: { handle?: WorkflowHandle; snapshot: typeof btcSnapshot } = { snapshot: btcSnapshot };
    const rx = await receiver(async (_n, r) => {
      if (fieldsOf(r).result === 'pending') {
        marks.push(['pending-arrived', Date.now()]);
        await confirm(ctx.handle!, ctx.snapshot.uuid, ctx.snapshot);
        await new Promise((res) => setTimeout(res, 1500));
        marks.push(['pending-answered', Date.now()]);
        return { status: 500 };
      }
      marks.push(['confirmed-arrived', Date.now()]);
      return { status: 200 };
    });
    const seeded = await seedPayment(database.db, { callbackUrl: rx.url('/in-flight'), result: 'pending' });
    ctx.snapshot = seeded.snapshot;
    ctx.handle = await start({ paymentUuid: seeded.uuid, pending: seeded.snapshot, awaitConfirmed: true });
    const result = await resultOf(ctx.handle);
    expect(result.pending.state).toBe('cancelled');
    expect(result.delivered).toBe(true);
    expect(marks.map(([m]) => m)).toEqual(['pending-arrived', 'pending-answered', 'confirmed-arrived']);
    expect(marks[2][1]).toBeGreaterThanOrEqual(marks[1][1]);
    const rows = await attemptsOf(database.db, seeded.uuid);
    expect(rows.map((r) => [r.stage, r.attempt, r.responseStatus])).toEqual([['pending', 1, 500], ['confirmed', 1, 200]]);
  });

  it('after six failed attempts a resend redelivers the same stored snapshot', async () => {
    const rx = await receiver((n) => (n < 6 ? { status: 502 } : { status: 200 }));
    const { uuid, snapshot } = await seedPayment(database.db, { callbackUrl: rx.url('/resend'), post: 1, json: 0 });
    const handle = await start({ paymentUuid: uuid, confirmed: snapshot, resendWindow: '7 days' });
    await waitFor(async () => {
      if (rx.requests.length < 6) await env.sleep(20 * MIN);
      return (await statusOf(handle)).confirmed.state === 'exhausted';
    }, 60_000, 'six attempts');
    expect(rx.requests).toHaveLength(6);
    expect((await handle.executeUpdate(resendUpdate)).attempt).toBe(7);
    const result = await resultOf(handle);
    expect(result.delivered).toBe(true);
    expect(rx.requests).toHaveLength(7);
    for (const r of rx.requests) {
      expect(r.rawBody.equals(rx.requests[0].rawBody)).toBe(true);
      expect(r.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expectVerified(r);
    }
    const rows = await attemptsOf(database.db, uuid);
    expect(rows.map((r) => [r.attempt, r.responseStatus, r.confirmed, r.nextTry === null])).toEqual([
      [1, 502, 0, false], [2, 502, 0, false], [3, 502, 0, false], [4, 502, 0, false], [5, 502, 0, false], [6, 502, 0, true], [7, 200, 1, true],
    ]);
    expect((await paymentOf(database.db, uuid)).result).toBe('done');
    await expectReplays(handle);
  });

  it('an unsafe destination stops delivery after one recorded attempt', async () => {
    const { uuid, snapshot } = await seedPayment(database.db, { callbackUrl: 'http://169.254.169.254/latest/meta-data' });
    const result = await run({ paymentUuid: uuid, confirmed: snapshot, resendWindow: '1 minute' });
    expect(result.confirmed).toMatchObject({ state: 'stopped', attempts: 1 });
    const rows = await attemptsOf(database.db, uuid);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ attempt: 1, responseStatus: null, nextTry: null, pending: 0, confirmed: 0 });
    expect(rows[0].error).toMatch(/^unsafe destination: .*169\.254\.169\.254.*link-local/);
  });

  it('a permanent activity error (unknown payment) stops the stage instead of retrying for hours', async () => {
    const paymentUuid = crypto.randomUUID();
    const handle = await start({ paymentUuid, pending: { ...btcSnapshot, uuid: paymentUuid }, awaitConfirmed: true });
    await waitFor(async () => (await statusOf(handle)).pending.state === 'stopped', 30_000, 'the pending stage to stop');
    const status = await statusOf(handle);
    expect(status.pending).toMatchObject({ state: 'stopped', attempts: 1 });
    expect(status.pending.lastError).toMatch(/not found/);
    // No retry timer was ever started: the only timer is the finality wait's one-day fallback.
    const events = (await handle.fetchHistory()).events ?? [];
    const timers = events.filter((e) => e.timerStartedEventAttributes).map((e) => Number(e.timerStartedEventAttributes!.startToFireTimeout!.seconds));
    expect(timers.every((seconds) => seconds === 24 * 3600)).toBe(true);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(1);
    await handle.terminate('test over');
  });
});
