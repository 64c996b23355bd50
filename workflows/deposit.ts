// One durable workflow per observed deposit (DESIGN 1): eligibility → optional pending callback →
// finality → forward (signed once, stored, broadcast) → immutable snapshot → confirmed callback → done.
import { ActivityFailure, ApplicationFailure, defineQuery, proxyActivities, setHandler, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { DepositActivities, DepositInput, PaymentInfo } from '../activities/deposit';
import { transition, type Effect, type LifecycleEvent, type LifecycleState } from '../src/domain/lifecycle';
import { SA_CALLBACK_HOST, SA_PAYMENT_UUID, SA_STAGE, SA_TICKER, SA_TXID_IN } from '../src/domain/search-attributes';
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
  const delivery = new PaymentDelivery(payment.uuid, { registerHandlers: false });
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

  // Finality: incoming confirmations only; a reorg before finality fails the payment with no forward.
  for (;;) {
    const c = await acts.confirmations(payment.uuid);
    if (c.status === 'reorged') {
      // Pending stops first, so no pending attempt can go out for a payment that is already failed.
      await pending?.cancel();
      await apply({ type: 'reorged' });
      return status;
    }
    status.confirmations = c.confirmations;
    if (c.confirmations >= payment.requiredConfirmations) break;
    await sleep(poll);
  }

  // The confirmed stage begins: pending is cancelled before anything else happens (SPEC 3 rule 1).
  await apply({ type: 'finality_reached' });
  await pending?.cancel();
  await acts.markProcessing(payment.uuid);

  // Forward: the stored bytes are re-sent until included. Only when the chain proves they can never land
  // (expired blockhash, nonce taken) and nothing moved are they discarded and the forward prepared anew.
  let included = false;
  for (let round = 1; !included; round++) {
    let txidOut: string;
    try {
      txidOut = (await forwardActs.forward(payment.uuid)).txidOut;
    } catch (e) {
      const failure = e instanceof ActivityFailure && e.cause instanceof ApplicationFailure ? e.cause : undefined;
      // The activity already discarded bytes the node refused as never-landing; prepare anew.
      if (failure?.type === REPREPARE_TYPE && round < MAX_FORWARD_ROUNDS) continue;
      // Permanent (the deposit cannot pay its way, the node rejects the bytes): recorded, funds stay at address_in.
      await apply({ type: 'forward_failed', reason: `forward failed: ${failure?.message ?? String(e)}` });
      return status;
    }
    status.txidOut = txidOut;
    for (;;) {
      const s = await acts.forwardStatus(payment.uuid);
      if (s === 'confirmed') {
        included = true;
        break;
      }
      if (s === 'failed') {
        const why = await acts.forwardFailure(payment.uuid);
        if (why.reprepare && round < MAX_FORWARD_ROUNDS) {
          await acts.discardForward(payment.uuid, txidOut);
          break;
        }
        await apply({ type: 'forward_failed', reason: `forward ${txidOut} failed: ${why.reason}` });
        return status;
      }
      await sleep(poll);
    }
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
