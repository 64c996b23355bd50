// Merchant callback delivery of the earlier depositWorkflow type (SPEC 3, 6, 8), kept unchanged for the
// deposits started before paymentWorkflow: confirmed stage and operator resends.
import type { Duration } from '@temporalio/common';
import { condition, defineSignal } from '@temporalio/workflow';
import type { CallbackSnapshot } from '../src/callbacks/types';
import {
  AUTOMATIC_ATTEMPTS,
  deliverStage,
  newStageStatus,
  runAttempt,
  storeConfirmedSnapshot,
  type StageOutcome,
  type StageStatus,
} from './delivery-stage';

export { RETRY_DELAYS_MS, AUTOMATIC_ATTEMPTS, deliverStage, startPendingDelivery } from './delivery-stage';
export type { PendingDelivery, StageInput, StageOutcome, StageStatus } from './delivery-stage';

/** Operator: re-deliver the stored confirmed snapshot once the six automatic attempts are spent. */
export const resendSignal = defineSignal('resend');

export interface DeliveryStatus {
  paymentUuid: string;
  pending: StageStatus;
  confirmed: StageStatus;
  resendsRequested: number;
  resendsSent: number;
}

/**
 * The confirmed stage and resends of a depositWorkflow (which runs its pending stage itself and registers
 * the `resend` signal and `status` query handlers).
 */
export class PaymentDelivery {
  readonly status: DeliveryStatus;
  private confirmedSnapshot: CallbackSnapshot | undefined;
  private confirmedOutcome: StageOutcome | undefined;

  constructor(readonly paymentUuid: string) {
    this.status = { paymentUuid, pending: newStageStatus(), confirmed: newStageStatus(), resendsRequested: 0, resendsSent: 0 };
  }

  /** Stores the confirmed snapshot (write-once) and runs the six attempts with the stored snapshot. */
  async runConfirmed(snapshot: CallbackSnapshot): Promise<StageOutcome> {
    this.confirmedSnapshot = await storeConfirmedSnapshot({ paymentUuid: this.paymentUuid, snapshot });
    this.confirmedOutcome = await deliverStage(
      { paymentUuid: this.paymentUuid, stage: 'confirmed', snapshot: this.confirmedSnapshot },
      this.status.confirmed,
    );
    return this.confirmedOutcome;
  }

  get delivered(): boolean {
    return this.confirmedOutcome?.state === 'delivered';
  }

  /**
   * After the automatic attempts: each `resend` signal sends the stored confirmed snapshot once more
   * (attempt 7, 8, ...; next_try null). Returns when a resend is delivered or no signal came for `idle`.
   * Signals received before the automatic attempts were spent are not replayed.
   */
  async serveResends(idle: Duration = '30 days'): Promise<StageOutcome | undefined> {
    if (!this.confirmedSnapshot || !this.confirmedOutcome) return undefined;
    this.status.resendsRequested = this.status.resendsSent;
    let attempt = Math.max(this.status.confirmed.attempts, AUTOMATIC_ATTEMPTS);
    while (!this.delivered) {
      const asked = await condition(() => this.status.resendsRequested > this.status.resendsSent, idle);
      if (!asked) break;
      this.status.resendsSent++;
      attempt++;
      const input = { paymentUuid: this.paymentUuid, stage: 'confirmed' as const, snapshot: this.confirmedSnapshot };
      const result = await runAttempt(input, attempt, null, this.status.confirmed);
      if (result.outcome === 'delivered') this.confirmedOutcome = { stage: 'confirmed', state: 'delivered', attempts: attempt };
      this.status.confirmed.state = result.outcome === 'delivered' ? 'delivered' : result.outcome === 'unsafe' || result.outcome === 'invalid' ? 'stopped' : 'exhausted';
    }
    return this.confirmedOutcome;
  }
}
