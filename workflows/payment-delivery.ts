// The confirmed callback of the payment workflow: six automatic attempts (SPEC 8), then operator resends.
import { condition } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import type { CallbackSnapshot } from '../src/callbacks/types';
import type { LifecycleEvent } from '../src/domain/lifecycle';
import { AUTOMATIC_ATTEMPTS, deliverStage, runAttempt, type StageStatus } from './delivery-stage';
import { local } from './payment-activities';

export interface ResendState {
  requested: number;
  sent: number;
  /** Workflow time until which resends are listened for, once the automatic attempts are spent. */
  until: number | null;
}

export interface DeliveryHooks {
  overBudget(): boolean;
  /** Continues as new when over budget (does not return then). */
  maybeContinue(): Promise<void>;
  resendWindow: string;
  /** Called before the stage waits (for its next attempt, or for a resend). */
  beforeWait?: () => void;
}

/** Writes the immutable confirmed snapshot (DESIGN 5), write-once: answers the one stored first. */
export async function snapshotConfirmed(uuid: string): Promise<CallbackSnapshot> {
  return local.confirmedSnapshot(uuid);
}

/**
 * Runs (or resumes) the confirmed stage with the stored snapshot; when it ends undelivered, serves the
 * queued resends (the `resend` update) until one is delivered or the window closes. Returns
 * confirmed_delivered once an attempt gets HTTP 200.
 */
export async function deliverConfirmed(
  c: { payment: { uuid: string }; snapshot: CallbackSnapshot | null; confirmed: StageStatus; resends: ResendState },
  hooks: DeliveryHooks,
): Promise<LifecycleEvent | undefined> {
  const uuid = c.payment.uuid;
  const snapshot = (c.snapshot ??= await snapshotConfirmed(uuid));
  const input = { paymentUuid: uuid, stage: 'confirmed' as const, snapshot };
  while (['idle', 'waiting', 'sending'].includes(c.confirmed.state)) {
    const out = await deliverStage(input, c.confirmed, { yieldIf: hooks.overBudget, beforeWait: hooks.beforeWait });
    if (out.state === 'suspended') await hooks.maybeContinue();
  }
  if (c.confirmed.state === 'delivered') return { type: 'confirmed_delivered' };
  c.resends.until ??= new Date().getTime() + msToNumber(hooks.resendWindow);
  for (;;) {
    await hooks.maybeContinue();
    const left = c.resends.until - new Date().getTime();
    if (left <= 0) return undefined;
    hooks.beforeWait?.();
    if (!(await condition(() => c.resends.requested > c.resends.sent, left))) return undefined;
    c.resends.sent++;
    const attempt = Math.max(c.confirmed.attempts, AUTOMATIC_ATTEMPTS) + 1;
    const result = await runAttempt(input, attempt, null, c.confirmed);
    if (result.outcome === 'delivered') {
      c.confirmed.state = 'delivered';
      return { type: 'confirmed_delivered' };
    }
    c.confirmed.state = result.outcome === 'unsafe' || result.outcome === 'invalid' ? 'stopped' : 'exhausted';
  }
}
