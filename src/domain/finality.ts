import { NETWORKS } from './assets';

/**
 * Slots between a Solana slot and its finalization as the watcher counts them (confirmed slots read):
 * the cluster finalizes a slot about 32 slots after it is confirmed. A deposit's own check decides;
 * this only says when the watcher should tell its workflow to look.
 */
export const SOL_FINALITY_SLOTS = 32n;

/**
 * The block height at which a deposit mined at `blockNumber` reaches `required` confirmations on the
 * watcher's reading (tip − height + 1 ≥ required); for the sol family, when its slot should be final.
 */
export function dueHeight(network: string, blockNumber: bigint, required: number): bigint {
  if (NETWORKS[network].family === 'sol') return blockNumber + SOL_FINALITY_SLOTS;
  return blockNumber + BigInt(Math.max(required, 1)) - 1n;
}
