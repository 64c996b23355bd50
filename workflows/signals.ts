// Messages the payment workflow takes and the status it answers, in a module of their own so that the
// worker and the admin CLI can import them without the workflow code.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { LifecycleState } from '../src/domain/lifecycle';
import type { StageStatus } from './delivery-stage';
import type { ForwardWaiting } from './payment-forward';

/**
 * What the watcher tells a deposit workflow (src/detection/push.ts). A hint, never a verdict: the workflow
 * reads the chain once on it, and a lost hint only delays it until its fallback timer.
 *   due      the watcher's newest block passed the deposit's due height (finality may be reached)
 *   recheck  the chain was reorganised at or below the deposit's block
 *   forward  a block holds the payment's stored forward (txid_out)
 *   dropped  a block holds another transaction that takes what the stored forward needs (its source's
 *            nonce, or the deposit output it spends): the forward can never land as stored
 */
export interface ChainHint {
  kind: 'due' | 'recheck' | 'forward' | 'dropped';
  /** The block height the hint comes from (decimal string). */
  height: string;
}
export const chainSignal = defineSignal<[ChainHint]>('chain');

export interface ResendAnswer {
  attempt: number;
  message: string;
}
/** Operator: send the stored confirmed snapshot once more. Refused, with the reason, until the six automatic attempts are spent. */
export const resendUpdate = defineUpdate<ResendAnswer>('resend');

/** The callback stages of a payment, as its status shows them. */
export interface DeliveryStatus {
  paymentUuid: string;
  pending: StageStatus;
  confirmed: StageStatus;
  resendsRequested: number;
  resendsSent: number;
}

/** What the `status` query answers: the payment's live state. */
export interface PaymentStatus {
  uuid: string;
  state: LifecycleState;
  confirmations: number;
  required: number;
  txidOut: string | null;
  reason: string | null;
  /** Why the forward waits to be tried again, while a transient condition holds it back. */
  waiting: ForwardWaiting | null;
  delivery: DeliveryStatus;
}

export const paymentStatusQuery = defineQuery<PaymentStatus>('status');
