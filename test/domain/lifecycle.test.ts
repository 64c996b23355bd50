import { IllegalTransition, resumeEffects, transition, type LifecycleEvent, type LifecycleState } from '../../src/domain/lifecycle';

type Row = [LifecycleState, LifecycleEvent, LifecycleState, string[]];

const allowed: Row[] = [
  ['observed', { type: 'eligible', notifyPending: true, evidence: true }, 'pending', ['start_pending_delivery', 'await_finality']],
  // pending=0 at creation: no pending callback, straight on to finality
  ['observed', { type: 'eligible', notifyPending: false, evidence: true }, 'pending', ['await_finality']],
  // price or cost evidence unavailable: the pending callback is withheld, the deposit is kept
  ['observed', { type: 'eligible', notifyPending: true, evidence: false }, 'pending', ['await_finality']],
  ['observed', { type: 'ineligible', reason: 'below minimum' }, 'failed', ['record_failure']],
  // a reorg before finality: failed, no forward, pending delivery cancelled
  ['pending', { type: 'reorged' }, 'failed', ['cancel_pending_delivery', 'record_failure']],
  // the confirmed stage begins: a pending retry can never be delivered after this
  ['pending', { type: 'finality_reached' }, 'processing', ['cancel_pending_delivery', 'forward']],
  ['processing', { type: 'forwarded' }, 'sent', ['snapshot_confirmed', 'deliver_confirmed']],
  ['processing', { type: 'forward_failed', reason: 'rejected' }, 'failed', ['record_failure']],
  // only final facts fail a payment: a transient one (node refusing, price missing, a fee spike) waits, then forwards again
  ['processing', { type: 'forward_waiting', reason: 'forward waiting (InsufficientAmountError): gas above the deposit' }, 'processing', ['await_forward_retry', 'forward']],
  ['sent', { type: 'confirmed_delivered' }, 'done', []],
];

const illegal: Array<[LifecycleState, LifecycleEvent]> = [
  ['observed', { type: 'finality_reached' }],
  ['pending', { type: 'forwarded' }],
  ['pending', { type: 'confirmed_delivered' }],
  // a reorg after forwarding is not a lifecycle event: the money has moved
  ['processing', { type: 'reorged' }],
  ['sent', { type: 'reorged' }],
  ['sent', { type: 'forwarded' }],
  ['done', { type: 'confirmed_delivered' }],
  ['failed', { type: 'finality_reached' }],
  ['failed', { type: 'eligible', notifyPending: true, evidence: true }],
  // waiting belongs to the forward: nothing before finality or after the forward landed waits for it
  ['pending', { type: 'forward_waiting', reason: 'x' }],
  ['sent', { type: 'forward_waiting', reason: 'x' }],
  ['failed', { type: 'forward_waiting', reason: 'x' }],
];

describe('lifecycle transitions', () => {
  it.each(allowed)('%s + %j → %s', (from, event, to, effects) => {
    const t = transition(from, event);
    expect(t.state).toBe(to);
    expect(t.effects.map((e) => e.type)).toEqual(effects);
  });

  it.each(illegal)('%s + %j is rejected', (from, event) => {
    expect(() => transition(from, event)).toThrow(IllegalTransition);
  });

  it('a run carried over while its forward waits goes on waiting, then forwards; one not waiting forwards at once', () => {
    expect(resumeEffects('processing', 'forward waiting (Error): no price')).toEqual([
      { type: 'await_forward_retry', reason: 'forward waiting (Error): no price' },
      { type: 'forward' },
    ]);
    expect(resumeEffects('processing', null)).toEqual([{ type: 'forward' }]);
    expect(resumeEffects('processing')).toEqual([{ type: 'forward' }]);
  });
});
