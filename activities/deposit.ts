import { loadPayment, moveResult } from '../src/db/queries/payments';
import { callbackConfirmations } from '../src/domain/finality';
import type { CallbackSnapshot } from '../src/callbacks/types';
import type { ConfirmationsReading, DepositDeps, DepositInput, Evaluation, PaymentInfo } from './deposit-types';
import { baseSnapshot, paymentInfo as info } from './deposit-views';
import { confirmedSnapshot } from './confirmed-snapshot';
import { createForwardActivities } from './forward';
import { forwardWithFate } from './forward-watch';
import { judgeObserved, recordObserved } from './observed';
import { readConfirmations } from './readings';
export type { ConfirmationsReading, DepositDeps, DepositInput, Evaluation, ForwardFate, ForwardSent, PaymentInfo } from './deposit-types';

/**
 * The deposit workflow's activities, each a step of the lifecycle table (workflows/payment.ts): recorded
 * and judged (observed.ts), readings (readings.ts), processing and failure recorded, the forward and its
 * readings (forward-watch.ts, forward.ts), the confirmed snapshot (confirmed-snapshot.ts).
 */
export function createDepositActivities(deps: DepositDeps) {
  const { db } = deps;
  const forward = createForwardActivities(deps);

  return {
    /**
     * The workflow's first step, one local activity: records the deposit once (the UUID is made here, once)
     * and judges it (SPEC 3; judgeObserved) on what recording it read: one statement when the watcher's batch
     * wrote the row, as it usually has.
     */
    async recordAndEvaluate(input: DepositInput): Promise<{ payment: PaymentInfo; evaluation: Evaluation }> {
      const read = await recordObserved(db, input);
      const { payment, config } = read;
      const evaluation = await judgeObserved(deps, payment, config, read);
      // The forward's key, derived while the deposit waits for finality (the machine is then mostly idle)
      // instead of when a block makes many deposits due at once. The same worker runs the due step (sticky
      // workflow tasks); another worker derives it then, as before. Only a hint: never fails the step.
      if (evaluation.eligible) {
        try {
          (await deps.adapter(payment.network)).keepSigningKey?.(config.derivationIndex);
        } catch {
          // The forward derives the key itself.
        }
      }
      return { payment: info(payment, config), evaluation };
    },

    async markFailed(uuid: string, reason: string): Promise<boolean> {
      return moveResult(db, uuid, ['pending', 'processing'], 'failed', reason);
    },

    /**
     * pending → processing as a step of its own (a no-op when already past pending): histories from before the
     * patch PROCESSING_IN_FORWARD (workflows/payment-forward.ts) took it; the forward's step records it now.
     */
    async recordProcessing(uuid: string): Promise<boolean> {
      return moveResult(db, uuid, ['pending'], 'processing');
    },

    /** Incoming confirmations, stored for logs; the sol family reports finality 0 or 1. */
    async confirmations(uuid: string): Promise<ConfirmationsReading> {
      const { payment, config } = await loadPayment(db, uuid);
      return readConfirmations(deps, payment, config);
    },

    async pendingSnapshot(uuid: string): Promise<CallbackSnapshot> {
      const { payment, config } = await loadPayment(db, uuid);
      const snap = baseSnapshot(payment, config);
      snap.confirmations = callbackConfirmations(payment.network, 'pending', snap.confirmations);
      return snap;
    },

    confirmedSnapshot: (uuid: string) => confirmedSnapshot(deps, uuid),

    forward: (uuid: string) => forwardWithFate(deps, uuid),

    forwardFate: forward.forwardFate,

    discardForward: forward.discardForward,
  };
}

export type DepositActivities = ReturnType<typeof createDepositActivities>;
