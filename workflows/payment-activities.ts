// The payment workflow's activity proxies (workflows/payment.ts and its stages).
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
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
 * The forward signs and broadcasts, possibly after waiting for its source's lock or a gas top-up. It
 * heartbeats, so a worker that dies mid-forward is noticed within the heartbeat timeout and another one
 * resumes with the stored bytes.
 */
export const forwardActs = proxyActivities<DepositActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
