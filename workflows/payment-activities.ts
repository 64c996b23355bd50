// The payment workflow's activity proxies (workflows/payment.ts and its stages).
import { isCancellation, proxyLocalActivities, TemporalFailure } from '@temporalio/workflow';
import type { DeliveryActivities } from '../activities/delivery';
import type { DepositActivities } from '../activities/deposit';

const RETRY = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes' };

/**
 * Short database writes and single chain readings: local activities, one marker event each instead of a
 * scheduled/started/completed triple and a workflow task. Each is idempotent (a worker lost mid-task runs it again).
 */
export const local = proxyLocalActivities<DepositActivities>({ startToCloseTimeout: '1 minute', retry: RETRY });
export const localDelivery = proxyLocalActivities<DeliveryActivities>({ startToCloseTimeout: '1 minute', retry: RETRY });

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

/**
 * A confirmations reading that, when it finds the deposit final, makes the
 * forward's first attempt in the same step. Retried as a reading (a node that does not answer gives no
 * reading); the forward inside it may wait for its source's lock or a gas top-up, hence the forward's
 * timeout. The worker keeps the workflow task alive meanwhile, as for localForward.
 */
const dueReadings = proxyLocalActivities<DepositActivities>({ startToCloseTimeout: '10 minutes', retry: { ...RETRY, maximumAttempts: 6 } });
export const readConfirmationsThenForward = (uuid: string) => orNothing(dueReadings.confirmationsThenForward(uuid));
export const readForwardFateSnapshot = (uuid: string) => orNothing(readings.forwardFateSnapshot(uuid));

/**
 * The forward signs and broadcasts, possibly after waiting for its source's lock or a gas top-up: a local
 * activity, inside the workflow task that found finality, with no activity task to dispatch and no
 * workflow task for its result. The worker keeps that workflow task alive while the forward runs; a worker
 * that dies mid-forward is noticed when the task times out (10 s), and another one runs it again with the
 * stored bytes.
 */
export const localForward = proxyLocalActivities<DepositActivities>({
  startToCloseTimeout: '10 minutes',
  // A few quick tries, then the failure comes back to the workflow, which waits with its own backoff through
  // timers that continue-as-new can cut (forward_waiting): retried here for ever, a lasting condition would
  // grow one run's history without bound (each retry past a minute is a timer, each task a heartbeat).
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
});
