// Messages the payment workflow takes and the status it answers, in a module of their own so that the
// worker and the admin CLI can import them without the workflow code.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ChainHint } from '../src/domain/hints';
import type { LifecycleState } from '../src/domain/lifecycle';
import type { StageStatus } from './delivery-stage';
import type { ForwardWaiting } from './payment-forward';

/** The watcher's hints (src/domain/hints.ts). */
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
