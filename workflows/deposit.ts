// One durable workflow per observed deposit (DESIGN 1): eligibility → optional pending callback →
// finality → forward (signed once, stored, broadcast) → immutable snapshot → confirmed callback → done.
import { ActivityFailure, ApplicationFailure, defineQuery, patched, proxyActivities, setHandler, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import type { DepositActivities, DepositInput, PaymentInfo } from '../activities/deposit';
import { transition, type Effect, type LifecycleEvent, type LifecycleState } from '../src/domain/lifecycle';
import { SA_CALLBACK_HOST, SA_PAYMENT_UUID, SA_STAGE, SA_TICKER, SA_TXID_IN } from '../src/domain/search-attributes';
import type { ForwardWaiting } from './payment-forward';
import { PaymentDelivery, resendSignal, startPendingDelivery, type DeliveryStatus, type PendingDelivery } from './delivery';

/** Chain reads and DB writes: retried with backoff, bounded per call; a node outage only delays. */
const acts = proxyActivities<DepositActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes' },
});

/**
 * The forward signs and broadcasts, possibly after waiting for the network's forward lock. It heartbeats,
 * so a worker that dies mid-forward is noticed within the heartbeat timeout and another one resumes
 * with the stored bytes.
 */
const forwardActs = proxyActivities<DepositActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** ApplicationFailure type of activities/deposit.ts REPREPARE (kept literal: workflows import types only). */
const REPREPARE_TYPE = 'ForwardNeedsReprepare';
const MAX_FORWARD_ROUNDS = 5;
/**
 * Forwards decided by one reading per poll (forwardFate), re-sent while the node lacks them, replaced
 * only on evidence seen on two blocks. Histories recorded before it keep the old inclusion loop.
 */
export const FORWARD_FATE_PATCH = 'forward-fate-once';
/** A reorg before finality is a verdict only when a second reading at a higher head repeats it. */
export const REORG_PATCH = 'reorg-two-readings';
/** The inclusion poll backs off from the poll interval up to this many times it. */
const MAX_BACKOFF_FACTOR = 16;

export interface DepositWorkflowOptions {
  /** How often confirmations and the forward's inclusion are polled (workflow time). */
  pollInterval?: string;
}

export interface DepositStatus {
  uuid: string | null;
  state: LifecycleState;
  confirmations: number;
  required: number | null;
  txidOut: string | null;
  reason: string | null;
  /**
   * Why the forward waits to be tried again, while a transient condition holds it back (payment workflows;
   * absent from depositWorkflow's status).
   */
  waiting?: ForwardWaiting | null;
  delivery: DeliveryStatus | null;
}

export const depositStatusQuery = defineQuery<DepositStatus>('status');

export async function depositWorkflow(input: DepositInput, opts: DepositWorkflowOptions = {}): Promise<DepositStatus> {
  const poll = opts.pollInterval ?? '15 seconds';
  const status: DepositStatus = { uuid: null, state: 'observed', confirmations: 0, required: null, txidOut: null, reason: null, delivery: null };
  const live: { delivery?: PaymentDelivery } = {};
  setHandler(depositStatusQuery, () => ({ ...status, delivery: live.delivery?.status ?? null }));
  // Registered at once; a resend counts only once the six automatic attempts are spent (serveResends).
  setHandler(resendSignal, () => {
    if (live.delivery) live.delivery.status.resendsRequested++;
  });

  const payment: PaymentInfo = await acts.recordDeposit(input);
  status.uuid = payment.uuid;
  status.required = payment.requiredConfirmations;
  const delivery = new PaymentDelivery(payment.uuid);
  live.delivery = delivery;
  upsertSearchAttributes([
    { key: SA_TICKER, value: payment.ticker },
    { key: SA_CALLBACK_HOST, value: payment.callbackHost },
    { key: SA_PAYMENT_UUID, value: payment.uuid },
    { key: SA_TXID_IN, value: payment.txidIn },
    { key: SA_STAGE, value: 'pending' },
  ]);

  const apply = async (event: LifecycleEvent): Promise<Effect[]> => {
    const t = transition(status.state, event);
    status.state = t.state;
    upsertSearchAttributes([{ key: SA_STAGE, value: t.state }]);
    for (const e of t.effects) {
      if (e.type === 'record_failure') {
        status.reason = e.reason;
        await acts.markFailed(payment.uuid, e.reason);
      }
    }
    return t.effects;
  };

  // Price or cost evidence missing (evidence=false): the pending callback is withheld and the deposit goes
  // on; the forward activity keeps retrying until the cost can be recovered.
  const evaluation = await acts.evaluate(payment.uuid);
  if (!evaluation.eligible) {
    await apply({ type: 'ineligible', reason: evaluation.reason });
    return status;
  }
  const eligibleEffects = await apply({ type: 'eligible', notifyPending: payment.notifyPending, evidence: evaluation.evidence });
  let pending: PendingDelivery | undefined;
  if (eligibleEffects.some((e) => e.type === 'start_pending_delivery')) {
    status.confirmations = (await acts.confirmations(payment.uuid)).confirmations;
    pending = startPendingDelivery({ paymentUuid: payment.uuid, snapshot: await acts.pendingSnapshot(payment.uuid) }, delivery.status.pending);
  }

  // Finality: incoming confirmations only; a reorg before finality fails the payment with no forward —
  // once two consecutive readings at increasing heads say so (one node's word is not enough).
  const reorgNeedsTwoReadings = patched(REORG_PATCH);
  let reorgAt: bigint | undefined;
  for (;;) {
    const c = await acts.confirmations(payment.uuid);
    if (c.status === 'reorged') {
      const at = BigInt(c.observedAt ?? '0');
      if (!reorgNeedsTwoReadings || (reorgAt !== undefined && at > reorgAt)) {
        // Pending stops first, so no pending attempt can go out for a payment that is already failed.
        await pending?.cancel();
        await apply({ type: 'reorged' });
        return status;
      }
      reorgAt ??= at;
      await sleep(poll);
      continue;
    }
    reorgAt = undefined;
    status.confirmations = c.confirmations;
    if (c.confirmations >= payment.requiredConfirmations) break;
    await sleep(poll);
  }

  // The confirmed stage begins: pending is cancelled before anything else happens (SPEC 3 rule 1).
  await apply({ type: 'finality_reached' });
  await pending?.cancel();
  await acts.markProcessing(payment.uuid);

  if (patched(FORWARD_FATE_PATCH)) {
    if (!(await forwardUntilIncluded(payment.uuid, msToNumber(poll), status, apply))) return status;
  } else if (!(await legacyForward(payment.uuid, poll, status, apply))) {
    return status;
  }

  const snapshot = await acts.confirmedSnapshot(payment.uuid);
  await apply({ type: 'forwarded' });
  const outcome = await delivery.runConfirmed(snapshot);
  if (outcome.state === 'delivered') {
    await apply({ type: 'confirmed_delivered' });
  } else {
    await delivery.serveResends();
    if (delivery.delivered) await apply({ type: 'confirmed_delivered' });
  }
  return status;
}

type Apply = (event: LifecycleEvent) => Promise<Effect[]>;

function failureOf(e: unknown): ApplicationFailure | undefined {
  return e instanceof ActivityFailure && e.cause instanceof ApplicationFailure ? e.cause : undefined;
}

/**
 * Forward until included: the stored bytes are broadcast and then read once per poll (forwardFate), the
 * poll backing off; the activity re-sends bytes the node lacks. A forward failed on chain is recorded
 * (funds stay at address_in). Bytes are replaced only when two readings on different blocks both prove
 * they can never land. Returns whether the forward was included.
 */
async function forwardUntilIncluded(uuid: string, pollMs: number, status: DepositStatus, apply: Apply): Promise<boolean> {
  for (let round = 1; ; round++) {
    let txidOut: string;
    try {
      txidOut = (await forwardActs.forward(uuid)).txidOut;
    } catch (e) {
      // Permanent before anything was sent (the deposit cannot pay its way, a colliding txid): recorded.
      await apply({ type: 'forward_failed', reason: `forward failed: ${failureOf(e)?.message ?? String(e)}` });
      return false;
    }
    status.txidOut = txidOut;
    let wait = pollMs;
    let evidence: bigint | undefined;
    for (;;) {
      const fate = await acts.forwardFate(uuid);
      if (fate.status === 'confirmed') return true;
      if (fate.status === 'failed') {
        await apply({ type: 'forward_failed', reason: `forward ${txidOut} failed: ${fate.reason}` });
        return false;
      }
      if (fate.status === 'replaceable') {
        const at = BigInt(fate.observedAt);
        if (evidence !== undefined && at > evidence) {
          if (round >= MAX_FORWARD_ROUNDS) {
            await apply({ type: 'forward_failed', reason: `forward ${txidOut} can never land (${fate.reason}) after ${round} plans` });
            return false;
          }
          await acts.discardForward(uuid, txidOut);
          break;
        }
        evidence ??= at;
      } else {
        // The evidence must hold on consecutive readings.
        evidence = undefined;
      }
      await sleep(wait);
      wait = Math.min(wait * 2, pollMs * MAX_BACKOFF_FACTOR);
    }
  }
}

/** The inclusion loop of histories recorded before FORWARD_FATE_PATCH; unchanged command order. */
async function legacyForward(uuid: string, poll: string, status: DepositStatus, apply: Apply): Promise<boolean> {
  let included = false;
  for (let round = 1; !included; round++) {
    let txidOut: string;
    try {
      txidOut = (await forwardActs.forward(uuid)).txidOut;
    } catch (e) {
      const failure = failureOf(e);
      if (failure?.type === REPREPARE_TYPE && round < MAX_FORWARD_ROUNDS) continue;
      await apply({ type: 'forward_failed', reason: `forward failed: ${failure?.message ?? String(e)}` });
      return false;
    }
    status.txidOut = txidOut;
    for (;;) {
      const s = await acts.forwardStatus(uuid);
      if (s === 'confirmed') {
        included = true;
        break;
      }
      if (s === 'failed') {
        const why = await acts.forwardFailure(uuid);
        if (why.reprepare && round < MAX_FORWARD_ROUNDS) {
          await acts.discardForward(uuid, txidOut);
          break;
        }
        await apply({ type: 'forward_failed', reason: `forward ${txidOut} failed: ${why.reason}` });
        return false;
      }
      await sleep(poll);
    }
  }
  return true;
}
