// What a payment workflow run carries and reports: its options, the state it hands to its next run, the
// status its query answers, and the check of a resend request. Pure code, no workflow commands.
import type { PaymentInfo } from '../activities/deposit';
import type { CallbackSnapshot } from '../src/callbacks/types';
import type { LifecycleState } from '../src/domain/lifecycle';
import { AUTOMATIC_ATTEMPTS, newStageStatus, type StageStatus } from './delivery-stage';
import type { ForwardProgress } from './payment-forward';
import type { ResendState } from './payment-delivery';
import type { PaymentStatus } from './signals';

export interface PaymentWorkflowOptions {
  /** How long a wait lasts with no signal before the workflow reads the chain itself. */
  fallback?: string;
  /** First wait after a reading a signal prompted that was not yet conclusive; doubles up to `fallback`. */
  recheck?: string;
  /** The run continues as new once its history reaches this many events (at a point with nothing in flight). */
  historyBudget?: number;
  /**
   * The longest wait between tries of a forward that a transient condition stopped (node down or refusing,
   * price missing, a fee spike): the first wait is a minute, doubling up to this. Default 1 hour.
   */
  forwardRetryCap?: string;
  /** How long an undelivered confirmed callback keeps listening for resends. */
  resendWindow?: string;
  /** false only where the namespace has none of the gateway's search attributes registered (they would fail every task). */
  searchAttributes?: boolean;
}

/** Everything a run hands to the next one when it continues as new. */
export interface Carry {
  payment: PaymentInfo;
  state: LifecycleState;
  confirmations: number;
  txidOut: string | null;
  reason: string | null;
  /** The pending stage while it runs (null when never started or stopped), and its snapshot. */
  pending: StageStatus | null;
  pendingSnapshot: CallbackSnapshot | null;
  /** First reorg reading not yet confirmed by a second one at a higher head. */
  reorgAt: string | null;
  forward: ForwardProgress;
  confirmed: StageStatus;
  snapshot: CallbackSnapshot | null;
  resends: ResendState;
  runs: number;
}

export function fresh(payment: PaymentInfo): Carry {
  return {
    payment,
    state: 'observed',
    confirmations: 0,
    txidOut: payment.txidOut,
    reason: null,
    pending: null,
    pendingSnapshot: null,
    reorgAt: null,
    forward: { round: 1, evidence: null, waiting: null },
    confirmed: newStageStatus(),
    snapshot: null,
    resends: { requested: 0, sent: 0, until: null },
    runs: 1,
  };
}

export function status(c: Carry): PaymentStatus {
  return {
    uuid: c.payment.uuid,
    state: c.state,
    confirmations: c.confirmations,
    required: c.payment.requiredConfirmations,
    txidOut: c.txidOut,
    reason: c.reason,
    waiting: c.state === 'processing' ? c.forward.waiting : null,
    delivery: {
      paymentUuid: c.payment.uuid,
      pending: c.pending ?? newStageStatus(),
      confirmed: c.confirmed,
      resendsRequested: c.resends.requested,
      resendsSent: c.resends.sent,
    },
  };
}

/** Why a resend cannot be queued now; nothing when it can (the six automatic attempts spent, undelivered). */
export function refuseResend(c: Carry): void {
  const s = c.confirmed;
  if (c.state === 'failed') throw new Error(`payment ${c.payment.uuid} failed (${c.reason ?? 'no reason'}): it has no confirmed callback to resend`);
  if (c.state !== 'sent' || s.state === 'idle') throw new Error(`payment ${c.payment.uuid} is ${c.state}: its confirmed callback is not written yet, nothing to resend`);
  if (s.state === 'delivered') throw new Error(`payment ${c.payment.uuid}: the confirmed callback was delivered (HTTP 200); nothing to resend`);
  if (s.attempts < AUTOMATIC_ATTEMPTS && (s.state === 'sending' || s.state === 'waiting')) {
    throw new Error(`payment ${c.payment.uuid}: the confirmed callback is in its automatic attempts (${s.attempts} of ${AUTOMATIC_ATTEMPTS} made); a resend can be asked after the last one`);
  }
}
