// Merchant callback delivery of the earlier depositWorkflow type (SPEC 3, 6, 8), kept unchanged for the
// deposits started before paymentWorkflow: pending stage, confirmed stage, operator resends.
import type { Duration } from '@temporalio/common';
import { condition, defineQuery, defineSignal, setHandler } from '@temporalio/workflow';
import type { CallbackSnapshot } from '../src/callbacks/types';
import {
  AUTOMATIC_ATTEMPTS,
  deliverStage,
  newStageStatus,
  runAttempt,
  startPendingDelivery,
  storeConfirmedSnapshot,
  type PendingDelivery,
  type StageOutcome,
  type StageStatus,
} from './delivery-stage';

export { RETRY_DELAYS_MS, AUTOMATIC_ATTEMPTS, deliverStage, startPendingDelivery } from './delivery-stage';
export type { PendingDelivery, StageInput, StageOutcome, StageStatus } from './delivery-stage';

/** Operator: re-deliver the stored confirmed snapshot once the six automatic attempts are spent. */
export const resendSignal = defineSignal('resend');
/** Live delivery state of both stages. */
export const statusQuery = defineQuery<DeliveryStatus>('status');

export interface DeliveryStatus {
  paymentUuid: string;
  pending: StageStatus;
  confirmed: StageStatus;
  resendsRequested: number;
  resendsSent: number;
}

/**
 * Delivery of one payment inside any workflow (the deposit lifecycle, or deliveryWorkflow below). Creating it
 * registers the `resend` signal and `status` query handlers on the calling workflow.
 */
export class PaymentDelivery {
  readonly status: DeliveryStatus;
  private pendingRun: PendingDelivery | undefined;
  private confirmedSnapshot: CallbackSnapshot | undefined;
  private confirmedOutcome: StageOutcome | undefined;

  constructor(readonly paymentUuid: string, opts: { registerHandlers?: boolean } = {}) {
    this.status = { paymentUuid, pending: newStageStatus(), confirmed: newStageStatus(), resendsRequested: 0, resendsSent: 0 };
    if (opts.registerHandlers !== false) {
      setHandler(resendSignal, () => {
        this.status.resendsRequested++;
      });
      setHandler(statusQuery, () => this.status);
    }
  }

  /** Starts the pending stage in the background (only when the merchant asked for pending=1). */
  startPending(snapshot: CallbackSnapshot): void {
    if (this.pendingRun || this.confirmedSnapshot) return;
    this.pendingRun = startPendingDelivery({ paymentUuid: this.paymentUuid, snapshot }, this.status.pending);
  }

  /**
   * Begins the confirmed stage: cancels the pending stage and waits until no pending attempt is in flight,
   * stores the confirmed snapshot (write-once) and runs the six attempts with the stored snapshot.
   */
  async runConfirmed(snapshot: CallbackSnapshot): Promise<StageOutcome> {
    if (this.pendingRun) await this.pendingRun.cancel();
    this.confirmedSnapshot = await storeConfirmedSnapshot({ paymentUuid: this.paymentUuid, snapshot });
    this.confirmedOutcome = await deliverStage(
      { paymentUuid: this.paymentUuid, stage: 'confirmed', snapshot: this.confirmedSnapshot },
      this.status.confirmed,
    );
    return this.confirmedOutcome;
  }

  /**
   * Cancels the pending stage and waits until no pending attempt is in flight; call it the moment the
   * lifecycle advances (SPEC 3 rule 1). runConfirmed does it too; calling both is harmless.
   */
  async cancelPending(): Promise<StageOutcome | undefined> {
    return this.pendingRun?.cancel();
  }

  /** Resolves when the pending stage has ended (delivered, exhausted, stopped or cancelled). */
  async pendingSettled(): Promise<StageOutcome | undefined> {
    return this.pendingRun?.result;
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
