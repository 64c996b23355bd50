// The six-attempt schedule of one callback stage (SPEC 8): deterministic workflow code only.
import { ActivityCancellationType, ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, proxyActivities, proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { DeliverAttemptResult, DeliveryActivities } from '../activities/delivery';
import type { CallbackEvent, CallbackSnapshot } from '../src/callbacks/types';

/** Waits after attempts 1..5 fail, measured from the failed attempt: +5, +15, +30, +60, +120 minutes. */
export const RETRY_DELAYS_MS: readonly number[] = [5, 15, 30, 60, 120].map((m) => m * 60_000);
export const AUTOMATIC_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

// The activity owns the callback timeout (CALLBACK_TIMEOUT_MS <= 120 s); this only bounds a stuck worker.
const ACTIVITY_TIMEOUT = '5 minutes';
/** An attempt heartbeats while it runs: a worker that died mid-attempt is noticed within this. */
const HEARTBEAT_TIMEOUT = '30 seconds';
/**
 * The workflow, not Temporal's retry policy, owns the schedule of merchant attempts: a merchant's
 * answer (any status, time-out, refused connection) comes back as a result, never as an error. What
 * does throw is the gateway's own trouble (a worker lost mid-attempt, the database away): that attempt
 * is run again at once, under the same attempt number (the activity is idempotent per attempt row; a
 * request that went out before a crash may reach the merchant twice, which SPEC 6 rule 3 allows).
 */
const INFRASTRUCTURE_RETRY = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 };

/**
 * Confirmed attempts are local activities: the attempt runs inside the workflow task that wrote the
 * snapshot, with no activity task to dispatch. A worker lost mid-attempt is noticed when that task times
 * out, and the attempt runs again under the same number.
 */
const confirmedActs = proxyLocalActivities<DeliveryActivities>({
  startToCloseTimeout: ACTIVITY_TIMEOUT,
  retry: INFRASTRUCTURE_RETRY,
});

/**
 * Pending attempts: when the pending scope is cancelled while a request is in flight, the workflow waits
 * for that attempt to finish, so the confirmed stage never starts before the last pending request ends.
 */
const pendingActs = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: ACTIVITY_TIMEOUT,
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: INFRASTRUCTURE_RETRY,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

export type StageState = 'idle' | 'sending' | 'waiting' | 'delivered' | 'exhausted' | 'stopped' | 'skipped' | 'cancelled';

export interface StageStatus {
  state: StageState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  /** Virtual workflow time (ms) when the next attempt is due, while waiting. */
  nextTryAt: number | null;
}

export interface StageOutcome {
  stage: CallbackEvent;
  /** suspended: the stage stopped before a wait for its caller to continue as new (StageOptions.yieldIf). */
  state: Extract<StageState, 'delivered' | 'exhausted' | 'stopped' | 'skipped' | 'cancelled'> | 'suspended';
  attempts: number;
}

export interface StageInput {
  paymentUuid: string;
  stage: CallbackEvent;
  snapshot: CallbackSnapshot;
}

export function newStageStatus(): StageStatus {
  return { state: 'idle', attempts: 0, lastStatus: null, lastError: null, nextTryAt: null };
}

/** Runs one attempt through the activity; an activity error (DB down, worker lost) is a failed attempt. */
export async function runAttempt(
  input: StageInput,
  attempt: number,
  nextTryDelayMs: number | null,
  status: StageStatus,
): Promise<DeliverAttemptResult> {
  const acts = input.stage === 'pending' ? pendingActs : confirmedActs;
  status.state = 'sending';
  status.nextTryAt = null;
  let result: DeliverAttemptResult;
  try {
    result = await acts.deliverCallbackAttempt({ ...input, attempt, nextTryDelayMs });
  } catch (e) {
    if (isCancellation(e)) throw e;
    // A permanent activity error (unknown payment, snapshot of another payment) will not heal with time.
    // (A local activity's failure may arrive as the activity's own ApplicationFailure.)
    const cause = e instanceof ActivityFailure && e.cause ? e.cause : e;
    const permanent = cause instanceof ApplicationFailure && cause.nonRetryable;
    const message = cause instanceof Error ? cause.message : String(cause);
    result = { outcome: permanent ? 'invalid' : 'failed', status: null, error: message, nextTry: null };
  }
  status.attempts = Math.max(status.attempts, attempt);
  status.lastStatus = result.status;
  status.lastError = result.error;
  return result;
}

export interface StageOptions {
  /**
   * Asked before each wait: true ends the stage there as `suspended`, its status holding the attempts made
   * and when the next one is due, for the caller to continue as new and resume with that status.
   */
  yieldIf?: () => boolean;
  /** Called before each wait for the next attempt (commands only; it must not wait itself). */
  beforeWait?: () => void;
}

/**
 * Delivers one stage: attempt 1 at once, then a Temporal timer after each failure, exactly six attempts.
 * Stops early on HTTP 200 (delivered), an unsafe destination (stopped) or a payment past pending (skipped).
 * Cancelling the enclosing scope stops it between attempts (state cancelled, via CancelledFailure).
 * A status carried over from an earlier run resumes where it stopped: the rest of its wait, then the next
 * attempt. A fresh status (no attempt made) runs exactly the commands it always did.
 */
export async function deliverStage(input: StageInput, status: StageStatus = newStageStatus(), opts: StageOptions = {}): Promise<StageOutcome> {
  if (status.attempts > 0 && status.nextTryAt !== null) {
    status.state = 'waiting';
    const left = status.nextTryAt - new Date().getTime();
    opts.beforeWait?.();
    if (left > 0) await sleep(left);
  }
  for (let attempt = status.attempts + 1; attempt <= AUTOMATIC_ATTEMPTS; attempt++) {
    const delay = attempt < AUTOMATIC_ATTEMPTS ? RETRY_DELAYS_MS[attempt - 1] : null;
    const result = await runAttempt(input, attempt, delay, status);
    if (result.outcome === 'delivered') return finish(input, status, 'delivered');
    if (result.outcome === 'unsafe' || result.outcome === 'invalid') return finish(input, status, 'stopped');
    if (result.outcome === 'skipped') return finish(input, status, 'skipped');
    if (delay === null) break;
    status.state = 'waiting';
    status.nextTryAt = new Date().getTime() + delay; // workflow clock: deterministic on replay
    if (opts.yieldIf?.()) return { stage: input.stage, state: 'suspended', attempts: status.attempts };
    opts.beforeWait?.();
    await sleep(delay);
  }
  return finish(input, status, 'exhausted');
}

function finish(input: StageInput, status: StageStatus, state: Exclude<StageOutcome['state'], 'suspended'>): StageOutcome {
  status.state = state;
  status.nextTryAt = null;
  return { stage: input.stage, state, attempts: status.attempts };
}

export interface PendingDelivery {
  /** Settles when the pending stage ends on its own or has been cancelled; never rejects on cancellation. */
  readonly result: Promise<StageOutcome>;
  /** Stops the pending stage and waits until no pending attempt is in flight. */
  cancel(): Promise<StageOutcome>;
}

/**
 * Starts the pending stage in its own cancellation scope, in the background of the calling workflow.
 * Call `cancel()` before the confirmed stage begins (SPEC 3 rule 1).
 */
export function startPendingDelivery(input: Omit<StageInput, 'stage'>, status: StageStatus = newStageStatus()): PendingDelivery {
  const scope = new CancellationScope();
  const stageInput: StageInput = { ...input, stage: 'pending' };
  const result = scope.run(() => deliverStage(stageInput, status)).catch((e: unknown) => {
    if (!isCancellation(e)) throw e;
    return finish(stageInput, status, 'cancelled');
  });
  return {
    result,
    async cancel() {
      scope.cancel();
      return result;
    },
  };
}
