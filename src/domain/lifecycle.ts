/**
 * The payment lifecycle (SPEC 3) as a pure function: (state, event) → { state, effects }.
 * Internal states are the logs `result` values; merchants only ever see pending and sent.
 * Anything the table does not allow is rejected, never silently ignored.
 *
 * The payment workflow (workflows/payment.ts) is an interpreter of this table and takes no step outside
 * it: it performs each effect in the order listed, each effect is one step of its own, and the effects
 * that wait (await_finality, forward, deliver_confirmed) return the next event. The order of the
 * lifecycle's commands is therefore the order written here: at finality the pending stage is stopped
 * first (SPEC 3 rule 1: no pending callback after finality), then the forward records processing and is
 * made; once it is included the confirmed snapshot is written, then delivered.
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
  /** A final fact: the forward failed or reverted on chain, or a colliding txid (a bug guard). */
  | { type: 'forward_failed'; reason: string }
  /**
   * A transient condition stopped the forward before anything was sent (node down or refusing, price
   * missing, cost above the deposit during a fee spike, balance not yet visible): no verdict.
   */
  | { type: 'forward_waiting'; reason: string }
  | { type: 'confirmed_delivered' };

export type Effect =
  /** Starts the pending callback stage in the background (pending=1 and the price evidence is there). */
  | { type: 'start_pending_delivery' }
  /** Waits for the deposit's required confirmations: yields finality_reached or reorged. */
  | { type: 'await_finality' }
  /** Stops the pending stage and waits until no pending attempt is in flight (SPEC 3 rule 1). */
  | { type: 'cancel_pending_delivery' }
  /**
   * Records `processing` in the payment row (a no-op past pending), then signs once, stores and broadcasts
   * the forward, in the same step (a local activity of a few seconds first, then an activity with heartbeats
   * when that does not end in time: it may wait for its source's lock or a gas top-up), then reads its fate
   * until included: yields forwarded, forward_waiting or forward_failed.
   */
  | { type: 'forward' }
  /** Waits out the forward's backoff (its reason shown in the query and the Temporal UI), then forward runs again. */
  | { type: 'await_forward_retry'; reason: string }
  /** Writes the immutable confirmed snapshot (DESIGN 5), in its one place (payments.snapshot, write-once). */
  | { type: 'snapshot_confirmed' }
  /** Six attempts of the confirmed callback, then operator resends: yields confirmed_delivered when one gets HTTP 200. */
  | { type: 'deliver_confirmed' }
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
        const notify: Effect[] = event.notifyPending && event.evidence ? [{ type: 'start_pending_delivery' }] : [];
        return { state: 'pending', effects: [...notify, { type: 'await_finality' }] };
      }
      if (event.type === 'ineligible') return { state: 'failed', effects: [{ type: 'record_failure', reason: event.reason }] };
      break;
    case 'pending':
      // A reorg before finality: nothing was forwarded, nothing will be.
      if (event.type === 'reorged') {
        return { state: 'failed', effects: [{ type: 'cancel_pending_delivery' }, { type: 'record_failure', reason: 'deposit block reorganised out before finality' }] };
      }
      // The pending stage is cancelled the moment the confirmed stage begins (SPEC 3 rule 1).
      if (event.type === 'finality_reached') {
        return { state: 'processing', effects: [{ type: 'cancel_pending_delivery' }, { type: 'forward' }] };
      }
      break;
    case 'processing':
      if (event.type === 'forwarded') return { state: 'sent', effects: [{ type: 'snapshot_confirmed' }, { type: 'deliver_confirmed' }] };
      if (event.type === 'forward_failed') return { state: 'failed', effects: [{ type: 'record_failure', reason: event.reason }] };
      // Only final facts fail a payment: a transient one makes it wait, then try again, for as long as it lasts.
      if (event.type === 'forward_waiting') {
        return { state: 'processing', effects: [{ type: 'await_forward_retry', reason: event.reason }, { type: 'forward' }] };
      }
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

/**
 * The effects still under way in a state, for a workflow run that continued as new in it: what the run
 * before was doing when it handed over (the pending stage resumes only if it was still running; a forward
 * waiting for its retry goes on waiting first, `waiting` being its reason).
 */
export function resumeEffects(state: LifecycleState, waiting?: string | null): Effect[] {
  if (state === 'pending') return [{ type: 'start_pending_delivery' }, { type: 'await_finality' }];
  if (state === 'processing') return waiting ? [{ type: 'await_forward_retry', reason: waiting }, { type: 'forward' }] : [{ type: 'forward' }];
  if (state === 'sent') return [{ type: 'deliver_confirmed' }];
  return [];
}
