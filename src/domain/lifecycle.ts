/**
 * The payment lifecycle (SPEC 3) as a pure function: (state, event) → { state, effects }.
 * Internal states are the logs `result` values; merchants only ever see pending and sent.
 * Anything the table does not allow is rejected, never silently ignored.
 */
export type PaymentResult = 'pending' | 'processing' | 'sent' | 'done' | 'failed';

/** `observed` is the moment between detection and the first recorded state. */
export type LifecycleState = PaymentResult | 'observed';

export type LifecycleEvent =
  /** evidence: price and network-cost evidence were available; without it the pending callback is withheld. */
  | { type: 'eligible'; notifyPending: boolean; evidence: boolean }
  | { type: 'ineligible'; reason: string }
  | { type: 'reorged' }
  | { type: 'finality_reached' }
  | { type: 'forwarded' }
  | { type: 'forward_failed'; reason: string }
  | { type: 'confirmed_delivered' };

export type Effect =
  | { type: 'start_pending_delivery' }
  | { type: 'cancel_pending_delivery' }
  | { type: 'forward' }
  | { type: 'snapshot_and_deliver_confirmed' }
  | { type: 'record_failure'; reason: string };

export interface Transition {
  state: LifecycleState;
  effects: Effect[];
}

export class IllegalTransition extends Error {
  constructor(
    readonly from: LifecycleState,
    readonly event: LifecycleEvent['type'],
  ) {
    super(`no transition from ${from} on ${event}`);
    this.name = 'IllegalTransition';
  }
}

export function transition(state: LifecycleState, event: LifecycleEvent): Transition {
  switch (state) {
    case 'observed':
      if (event.type === 'eligible') {
        return { state: 'pending', effects: event.notifyPending && event.evidence ? [{ type: 'start_pending_delivery' }] : [] };
      }
      if (event.type === 'ineligible') return { state: 'failed', effects: [{ type: 'record_failure', reason: event.reason }] };
      break;
    case 'pending':
      // A reorg before finality: nothing was forwarded, nothing will be.
      if (event.type === 'reorged') {
        return { state: 'failed', effects: [{ type: 'cancel_pending_delivery' }, { type: 'record_failure', reason: 'deposit block reorganised out before finality' }] };
      }
      // The pending stage is cancelled the moment the confirmed stage begins (SPEC 3 rule 1).
      if (event.type === 'finality_reached') return { state: 'processing', effects: [{ type: 'cancel_pending_delivery' }, { type: 'forward' }] };
      break;
    case 'processing':
      if (event.type === 'forwarded') return { state: 'sent', effects: [{ type: 'snapshot_and_deliver_confirmed' }] };
      if (event.type === 'forward_failed') return { state: 'failed', effects: [{ type: 'record_failure', reason: event.reason }] };
      break;
    case 'sent':
      if (event.type === 'confirmed_delivered') return { state: 'done', effects: [] };
      break;
    case 'done':
    case 'failed':
      break;
  }
  throw new IllegalTransition(state, event.type);
}

/** Merchant-visible stage of a state: only pending and sent exist for merchants (done is internal). */
export function merchantStage(state: PaymentResult): 'pending' | 'sent' | undefined {
  if (state === 'pending' || state === 'processing') return 'pending';
  if (state === 'sent' || state === 'done') return 'sent';
  return undefined;
}
