/**
 * What the watcher tells a deposit workflow (src/detection/push.ts, the workflow's `chain` signal). A hint,
 * never a verdict: the workflow reads the chain once on it, and a lost hint only delays it until its
 * fallback timer.
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
