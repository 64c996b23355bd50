// One durable workflow per observed deposit (DESIGN 1), driven by the lifecycle table (src/domain/lifecycle.ts):
// each transition's effects are performed in the order the table lists them. Waits are pushed: the watcher
// signals `chain` when a block makes the deposit due, reorganises it or includes its forward; a long
// fallback timer covers a lost signal. The history stays bounded: the run continues as new, carrying its
// state, before it grows past HISTORY_BUDGET events.
import { ApplicationFailure, CancellationScope, condition, continueAsNew, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import type { DepositInput, Evaluation } from '../activities/deposit';
import { resumeEffects, transition, type Effect, type LifecycleEvent } from '../src/domain/lifecycle';
import { AUTOMATIC_ATTEMPTS, newStageStatus, startPendingDelivery, type PendingDelivery } from './delivery-stage';
import { forwardStage, PROCESSING_IN_FORWARD } from './payment-forward';
import { fresh, refuseResend, status, type Carry, type PaymentWorkflowOptions } from './payment-carry';
import { local } from './payment-activities';
import { stageDisplay } from './payment-display';
import { awaitFinality } from './payment-finality';
import { Hints } from './payment-hints';
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
 * first stage, and a stage only when it changes what the Temporal UI shows (workflows/payment-display.ts).
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
  const hints = new Hints(fallbackMs);
  let pendingRun: PendingDelivery | undefined;
  /** The deposit was judged reorganised out (two readings at increasing heads). */
  let reorged = false;

  setHandler(chainSignal, hints.hinted);
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
  const showStage = stageDisplay(c, opts.searchAttributes !== false);
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

  /**
   * Waits for a chain signal or `ms`; true when a signal came since the last reading began (a hint that
   * arrives while a reading is under way is kept for the next wait, not cleared by it). A wait of fallbackMs
   * joins the fallback timer (Hints).
   */
  async function waitHint(ms: number): Promise<boolean> {
    showStage();
    await maybeContinue();
    if (ms !== fallbackMs) return condition(() => hints.news(), ms);
    // A hint already here: no timer to join or start.
    if (hints.news()) return true;
    const hinted = new CancellationScope();
    const woke = await Promise.race([
      hinted.run(() => condition(() => hints.news())).then(
        () => true,
        () => false,
      ),
      hints.fallbackTimer().then(() => false),
    ]);
    // The timer won: the condition is dropped (a cancelled condition sends no command).
    if (!woke) hinted.cancel();
    return woke;
  }
  const waits = { waitHint, beginReading: () => hints.beginReading(), fallbackMs, recheckMs };

  /** Performs one effect; `cause` is the event whose transition listed it (none when a run resumes). */
  async function perform(e: Effect, cause?: LifecycleEvent['type']): Promise<LifecycleEvent | undefined> {
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
        return awaitFinality(c, waits, () => {
          reorged = true;
        });
      case 'cancel_pending_delivery':
        await pendingRun?.cancel();
        pendingRun = undefined;
        return undefined;
      case 'record_failure':
        c.reason = e.reason;
        await local.markFailed(uuid, e.reason);
        return undefined;
      case 'forward':
        // Histories from before PROCESSING_IN_FORWARD recorded processing in a step of its own at finality.
        if (cause === 'finality_reached' && !patched(PROCESSING_IN_FORWARD)) await local.recordProcessing(uuid);
        return forwardStage(c, { ...waits, retryCapMs });
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
            hints.dropFallback();
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
      const cause = event.type;
      event = undefined;
      for (const e of t.effects) event = (await perform(e, cause)) ?? event;
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
