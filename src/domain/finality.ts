import { NETWORKS } from './assets';

/**
 * SPEC 2.4, 2.6 and 6 rule 8: the sol family shows finality only, 0 (not final) or 1 (final), never a
 * slot distance; every other family shows its count of confirmations. Every place that shows, requires
 * or estimates a deposit's confirmations asks here.
 */
export function showsFinalityOnly(network: string): boolean {
  return NETWORKS[network]?.family === 'sol';
}

/** The confirmations shown for a reading of `count`: 0 or 1 where only finality shows, never below 0. */
export function shownConfirmations(network: string, count: number): number {
  const n = Math.max(0, count);
  return showsFinalityOnly(network) ? Math.min(n, 1) : n;
}

/**
 * The confirmations a configuration requires: its own (or the asset's default) where counts show; 1
 * (final) where only finality shows, whatever was asked (SPEC 4.6: the override does not change it).
 */
export function requiredConfirmations(network: string, chosen: number): number {
  return showsFinalityOnly(network) ? 1 : chosen;
}

/**
 * The confirmations a callback of `event` carries (SPEC 2.6): where only finality shows, 0 in the
 * pending callback and 1 in the confirmed one; elsewhere the count the snapshot holds.
 */
export function callbackConfirmations(network: string | undefined, event: 'pending' | 'confirmed', count: number): number {
  if (network !== undefined && showsFinalityOnly(network)) return event === 'confirmed' ? 1 : 0;
  return count;
}

/**
 * Confirmations of a deposit in block `height` when `tip` is the newest block read: at least 1 (it is
 * mined); 0 where only finality shows, which only the deposit's own check reports.
 */
export function confirmationsAtDetection(network: string, height: bigint, tip: bigint): number {
  if (showsFinalityOnly(network)) return 0;
  const n = tip - height + 1n;
  return n < 1n ? 1 : Number(n);
}

/**
 * Slots between a Solana slot and its finalization as the watcher counts them (confirmed slots read):
 * the cluster finalizes a slot about 32 slots after it is confirmed. A deposit's own check decides;
 * this only says when the watcher should tell its workflow to look.
 */
export const SOL_FINALITY_SLOTS = 32n;

/**
 * The block height at which a deposit mined at `blockNumber` reaches `required` confirmations on the
 * watcher's reading (tip − height + 1 ≥ required); where only finality shows, when its slot should be final.
 */
export function dueHeight(network: string, blockNumber: bigint, required: number): bigint {
  if (showsFinalityOnly(network)) return blockNumber + SOL_FINALITY_SLOTS;
  return blockNumber + BigInt(Math.max(required, 1)) - 1n;
}
