// The await_finality effect of the payment workflow: readings of the deposit's confirmations, one per
// wake, until it is final or judged reorganised out.
import type { LifecycleEvent } from '../src/domain/lifecycle';
import type { Carry } from './payment-carry';
import { readConfirmations } from './payment-activities';

export interface FinalityWaits {
  /** Waits for a chain hint or `ms`; true when a hint came since the last reading began. */
  waitHint(ms: number): Promise<boolean>;
  /** Marks the start of a reading (hints after it wake the next wait). */
  beginReading(): void;
  fallbackMs: number;
  recheckMs: number;
}

/**
 * Reads until the deposit has its required confirmations (finality_reached) or two readings at increasing
 * heads say it is gone (reorged: one node's word is not enough). A reading the node did not answer is no
 * verdict either way. `onReorganised` is told before the reorged verdict is returned. After a hint the chain is close: the next reading comes soon, backing off, until it
 * says so; otherwise the wait is the fallback's.
 */
export async function awaitFinality(c: Carry, w: FinalityWaits, onReorganised: () => void): Promise<LifecycleEvent> {
  let short = w.recheckMs;
  let soon = false;
  for (;;) {
    w.beginReading();
    const r = await readConfirmations(c.payment.uuid);
    if (r === undefined) {
      // The node did not answer: no verdict either way; the next signal or the fallback reads again.
    } else if (r.status === 'reorged') {
      const at = r.observedAt ?? '0';
      if (c.reorgAt !== null && BigInt(at) > BigInt(c.reorgAt)) {
        onReorganised();
        return { type: 'reorged' };
      }
      c.reorgAt ??= at;
      soon = true;
    } else {
      c.reorgAt = null;
      c.confirmations = r.confirmations;
      if (r.confirmations >= c.payment.requiredConfirmations) return { type: 'finality_reached' };
    }
    const signalled = await w.waitHint(soon ? short : w.fallbackMs);
    soon = signalled || c.reorgAt !== null;
    short = signalled ? w.recheckMs : Math.min(short * 2, w.fallbackMs);
  }
}
