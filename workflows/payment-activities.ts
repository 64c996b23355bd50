// The payment workflow's activity proxies (workflows/payment.ts and its stages).
import { isCancellation, proxyActivities, proxyLocalActivities, TemporalFailure } from '@temporalio/workflow';
import type { DepositActivities } from '../activities/deposit';

const RETRY = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes' };

/**
 * Short database writes and single chain readings, each done in well under a minute: local activities,
 * one marker event each instead of a scheduled/started/completed triple and a workflow task. Each is
 * idempotent (a worker lost mid-task runs it again).
 */
export const local = proxyLocalActivities<DepositActivities>({ startToCloseTimeout: '1 minute', retry: RETRY });

/**
 * Chain readings the workflow can do without (it reads again on the next signal or fallback): retried a
 * few times (about 4 minutes), then given up, so that a node down for hours costs a bounded number of
 * events per run instead of one local-activity retry timer every two minutes.
 */
const readings = proxyLocalActivities<DepositActivities>({ startToCloseTimeout: '1 minute', retry: { ...RETRY, maximumAttempts: 6 } });

/** A reading, or undefined when the node did not answer (the caller waits and reads again). */
async function orNothing<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (e) {
    // A local activity's failure arrives as ActivityFailure or as the activity's own ApplicationFailure.
    if (e instanceof TemporalFailure && !isCancellation(e)) return undefined;
    throw e;
  }
}
export const readConfirmations = (uuid: string) => orNothing(readings.confirmations(uuid));
export const readForwardFate = (uuid: string) => orNothing(readings.forwardFate(uuid));

/**
 * The forward's first try on a payment whose history has the FORWARD_LOCAL_FIRST patch (workflows/payment-forward.ts):
 * a local activity that ends in seconds (its timeout; no retry), in the same workflow task as the steps
 * before it. A try that times out or fails retryably goes to `forwarding`, which re-sends stored bytes.
 */
export const quickForwarding = proxyLocalActivities<DepositActivities>({ startToCloseTimeout: '8 seconds', retry: { maximumAttempts: 1 } });

/**
 * The forward may wait for its source's lock (forwards from one address are serialised) or for a gas
 * top-up to be mined, which is not work of a few seconds: a regular activity that heartbeats while it
 * runs, so that a worker lost mid-forward is noticed within the heartbeat timeout and another attempt
 * re-sends the stored bytes (never signs twice).
 */
export const forwarding = proxyActivities<DepositActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  // A few quick tries, then the failure comes back to the workflow, which waits with its own backoff through
  // timers that continue-as-new can cut (forward_waiting): retried here for ever, a lasting condition would
  // keep the forward out of the workflow's hands (no reason shown, no history bound).
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
});
