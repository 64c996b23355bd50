// One durable workflow per observed deposit (DESIGN 1), driven by the lifecycle table (src/domain/lifecycle.ts):
// each transition's effects are performed in the order the table lists them. Waits are pushed: the watcher
// signals `chain` when a block makes the deposit due, reorganises it or includes its forward; a long
// fallback timer covers a lost signal. The history stays bounded: the run continues as new, carrying its
// state, before it grows past HISTORY_BUDGET events.
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import type { DepositInput, Evaluation } from '../activities/deposit';
import { resumeEffects, transition, type Effect, type LifecycleEvent, type LifecycleState } from '../src/domain/lifecycle';
import { SA_CALLBACK_HOST, SA_PAYMENT_UUID, SA_STAGE, SA_TICKER, SA_TXID_IN } from '../src/domain/search-attributes';
import { AUTOMATIC_ATTEMPTS, newStageStatus, startPendingDelivery, type PendingDelivery } from './delivery-stage';
import { forwardStage } from './payment-forward';
import { fresh, refuseResend, status, type Carry, type PaymentWorkflowOptions } from './payment-carry';
import { local, readConfirmations } from './payment-activities';
import { chainSignal, paymentStatusQuery, resendUpdate, type PaymentStatus } from './signals';
import { deliverConfirmed, snapshotConfirmed } from './payment-delivery';

export type { Carry, PaymentWorkflowOptions } from './payment-carry';

export const HISTORY_BUDGET = 100;

/**
 * The failure type a paymentLifecycle run ends with when its deposit was judged reorganised out: the only
 * verdict the chain can take back. The watcher starts deposits with ALLOW_DUPLICATE_FAILED_ONLY, so the same
 * deposit mined again starts a new lifecycle under its workflow ID, where a completed run (done, below the
 * minimum, a forward failed on chain) is never started again.
 */
export const DEPOSIT_REORGANISED = 'DepositReorganised';

/**
 * The workflow type the watcher starts for each deposit. The deposit is recorded and evaluated in one local
 * activity; from then on each step is one effect of the table, performed as listed: readings until
 * finality, processing recorded, the forward (a local activity first, an activity with heartbeats when that
 * does not end in seconds) and its readings, the confirmed
 * snapshot, the confirmed attempts (local activities). The search attributes are written once with the
 * first stage, and a stage only when it changes what the Temporal UI shows (see `stageShown`).
 */
export async function paymentLifecycle(input: DepositInput, opts: PaymentWorkflowOptions = {}, carried?: Carry): Promise<PaymentStatus> {
  const fallbackMs = msToNumber(opts.fallback ?? '5 minutes');
  const recheckMs = Math.min(msToNumber(opts.recheck ?? '2 seconds'), fallbackMs);
  const budget = opts.historyBudget ?? HISTORY_BUDGET;
  const retryCapMs = msToNumber(opts.forwardRetryCap ?? '1 hour');
  let evaluation: Evaluation | undefined;
  let c: Carry;
  if (carried) c = carried;
  else {
    const first = await local.recordAndEvaluate(input);
    c = fresh(first.payment);
    evaluation = first.evaluation;
  }
  const uuid = c.payment.uuid;
  /** Hints received, and how many of them had come when the last reading began. */
  let hints = 0;
  let readFrom = 0;
  let pendingRun: PendingDelivery | undefined;
  /** The deposit was judged reorganised out (two readings at increasing heads). */
  let reorged = false;

  setHandler(chainSignal, () => {
    hints++;
  });
  setHandler(paymentStatusQuery, () => status(c));
  setHandler(
    resendUpdate,
    () => {
      c.resends.requested++;
      const attempt = AUTOMATIC_ATTEMPTS + c.resends.requested;
      return { attempt, message: `resend queued for payment ${uuid}: attempt ${attempt} goes out now` };
    },
    { validator: () => refuseResend(c) },
  );
  const attributes = opts.searchAttributes === false ? () => undefined : upsertSearchAttributes;
  const identity: SearchAttributeUpdatePair[] = [
    { key: SA_TICKER, value: c.payment.ticker },
    { key: SA_CALLBACK_HOST, value: c.payment.callbackHost },
    { key: SA_PAYMENT_UUID, value: uuid },
    { key: SA_TXID_IN, value: c.payment.txidIn },
  ];
  /** The stage the UI shows: `waiting` while a transient condition holds the forward back (GatewayStage = "waiting" lists them). */
  const visibleStage = (s: LifecycleState) => (s === 'observed' ? 'pending' : s === 'processing' && c.forward.waiting ? 'waiting' : s);
  /** The reason a forward waits, on the workflow's page in the Temporal UI (its current details: no history event). */
  let detailsShown = '';
  const showDetails = () => {
    const w = c.state === 'processing' ? c.forward.waiting : null;
    const details = w ? `forward waiting since ${w.since} (${w.retries} tries), next try ${w.nextTry}: ${w.type}: ${w.reason}` : '';
    if (details !== detailsShown) setCurrentDetails(details);
    detailsShown = details;
  };
  /**
   * The stage the search attributes show (undefined before the first write, which
   * carries the identity too, in every run), and the state they should show. `sent` is written only when
   * the confirmed stage has to wait (an attempt failed) or ends without delivery: a first attempt that
   * gets HTTP 200 moves on to `done` in the same workflow task, and one write of `done` shows it.
   */
  let stageShown: string | undefined;
  const showStage = () => {
    showDetails();
    const stage = visibleStage(c.state);
    if (stage === stageShown) return;
    attributes(stageShown === undefined ? [...identity, { key: SA_STAGE, value: stage }] : [{ key: SA_STAGE, value: stage }]);
    stageShown = stage;
  };

  const overBudget = () => workflowInfo().historyLength >= budget || workflowInfo().continueAsNewSuggested;

  /**
   * Continues as new when the history is over budget and nothing is in flight: a pending stage waiting for
   * its next attempt is stopped and carried (its wait resumes in the next run); one sending is let finish.
   */
  async function maybeContinue(): Promise<void> {
    if (!overBudget()) return;
    if (pendingRun && c.pending) {
      if (c.pending.state === 'sending') return;
      const carriedStage = { ...c.pending };
      await pendingRun.cancel();
      c.pending = carriedStage;
    }
    showStage();
    await continueAsNew<typeof paymentLifecycle>(input, opts, { ...c, runs: c.runs + 1 });
  }

  /** A reading begins: hints from now on are news to it. */
  function beginReading(): void {
    readFrom = hints;
  }

  /**
   * The fallback reading's timer, one for consecutive waits for a hint: a wait of fallbackMs joins the one
   * under way instead of starting its own, and a hint leaves it running rather than cancelling it. A lost
   * hint still costs at most fallbackMs; a happy path pays one timer event in all instead of a start and a
   * cancel per wait. Undefined when none runs.
   */
  let fallback: { fired: Promise<boolean>; scope: CancellationScope } | undefined;

  function fallbackTimer(): Promise<boolean> {
    if (!fallback) {
      const scope = new CancellationScope();
      const fired = scope.run(() => sleep(fallbackMs)).then(
        () => true,
        () => false,
      );
      const mine = { fired, scope };
      void fired.then(() => {
        if (fallback === mine) fallback = undefined;
      });
      fallback = mine;
    }
    return fallback.fired;
  }

  /**
   * Before a wait that no hint ends (the confirmed callback's next attempt, a resend): the fallback timer
   * would only fire into it, a task for nothing.
   */
  function dropFallback(): void {
    fallback?.scope.cancel();
    fallback = undefined;
  }

  /**
   * Waits for a chain signal or `ms`; true when a signal came since the last reading began (a hint that
   * arrives while a reading is under way is kept for the next wait, not cleared by it).
   */
  async function waitHint(ms: number): Promise<boolean> {
    showStage();
    await maybeContinue();
    if (ms !== fallbackMs) return condition(() => hints > readFrom, ms);
    // A hint already here: no timer to join or start.
    if (hints > readFrom) return true;
    const hinted = new CancellationScope();
    const woke = await Promise.race([
      hinted.run(() => condition(() => hints > readFrom)).then(
        () => true,
        () => false,
      ),
      fallbackTimer().then(() => false),
    ]);
    // The timer won: the condition is dropped (a cancelled condition sends no command).
    if (!woke) hinted.cancel();
    return woke;
  }

  async function awaitFinality(): Promise<LifecycleEvent> {
    let short = recheckMs;
    let soon = false;
    for (;;) {
      beginReading();
      const r = await readConfirmations(uuid);
      if (r === undefined) {
        // The node did not answer: no verdict either way; the next signal or the fallback reads again.
      } else if (r.status === 'reorged') {
        const at = r.observedAt ?? '0';
        // One node's word is not enough: a verdict needs a second reading at a higher head.
        if (c.reorgAt !== null && BigInt(at) > BigInt(c.reorgAt)) {
          reorged = true;
          return { type: 'reorged' };
        }
        c.reorgAt ??= at;
        soon = true;
      } else {
        c.reorgAt = null;
        c.confirmations = r.confirmations;
        if (r.confirmations >= c.payment.requiredConfirmations) return { type: 'finality_reached' };
      }
      const signalled = await waitHint(soon ? short : fallbackMs);
      // After a signal the chain is close: read again soon, backing off, until it says so.
      soon = signalled || c.reorgAt !== null;
      short = signalled ? recheckMs : Math.min(short * 2, fallbackMs);
    }
  }

  async function perform(e: Effect): Promise<LifecycleEvent | undefined> {
    switch (e.type) {
      case 'start_pending_delivery':
        if (!carried) {
          c.pending = newStageStatus();
          c.pendingSnapshot = await local.pendingSnapshot(uuid);
        }
        if (c.pending && c.pendingSnapshot && ['idle', 'waiting'].includes(c.pending.state)) {
          pendingRun = startPendingDelivery({ paymentUuid: uuid, snapshot: c.pendingSnapshot }, c.pending);
        }
        return undefined;
      case 'await_finality':
        return awaitFinality();
      case 'cancel_pending_delivery':
        await pendingRun?.cancel();
        pendingRun = undefined;
        return undefined;
      case 'record_processing':
        await local.recordProcessing(uuid);
        return undefined;
      case 'record_failure':
        c.reason = e.reason;
        await local.markFailed(uuid, e.reason);
        return undefined;
      case 'forward':
        return forwardStage(c, { waitHint, beginReading, fallbackMs, recheckMs, retryCapMs });
      case 'await_forward_retry': {
        // Until the next try (carried across runs); a chain hint for this payment tries at once.
        const until = c.forward.waiting ? Date.parse(c.forward.waiting.nextTry) : new Date().getTime();
        const left = until - new Date().getTime();
        if (left > 0) await waitHint(left);
        return undefined;
      }
      case 'snapshot_confirmed':
        c.snapshot = await snapshotConfirmed(uuid);
        return undefined;
      case 'deliver_confirmed':
        return deliverConfirmed(c, {
          overBudget,
          maybeContinue,
          beforeWait: () => {
            dropFallback();
            showStage();
          },
          resendWindow: opts.resendWindow ?? '30 days',
        });
    }
  }

  async function apply(first: LifecycleEvent | undefined): Promise<void> {
    for (let event = first; event; ) {
      const t = transition(c.state, event);
      c.state = t.state;
      if (t.state !== 'sent') showStage();
      event = undefined;
      for (const e of t.effects) event = (await perform(e)) ?? event;
    }
  }

  if (evaluation) {
    // Price or cost evidence missing (evidence=false): the pending callback is withheld and the deposit goes on.
    await apply(
      evaluation.eligible
        ? { type: 'eligible', notifyPending: c.payment.notifyPending, evidence: evaluation.evidence }
        : { type: 'ineligible', reason: evaluation.reason },
    );
  } else {
    showStage();
    let next: LifecycleEvent | undefined;
    for (const e of resumeEffects(c.state, c.forward.waiting?.reason)) next = (await perform(e)) ?? next;
    await apply(next);
  }
  showStage();
  if (c.state === 'failed' && reorged) {
    // Ends the run as failed (the payment row says failed already): the one verdict the chain can take back.
    throw ApplicationFailure.create({ type: DEPOSIT_REORGANISED, message: `payment ${uuid}: ${c.reason ?? 'deposit reorganised out'}`, nonRetryable: true });
  }
  return status(c);
}
