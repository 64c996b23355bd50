import { NETWORKS } from '../domain/assets';
import type { Db } from '../db/client';
import { firstConfigAt } from '../db/queries/watch';
import { logger } from '../observability/logger';
import type { ChainAdapter, Cursor } from '../chains/adapter';

/**
 * Where a network's watcher starts when it has no cursor stored yet. At the head, unless the API has
 * already handed out addresses of the network: a customer may have paid one of them before this first
 * pass (the API ran before any worker, or the worker could not reach the node for a while), and a start
 * at the head would never read that block. The start is then the last block older than the network's
 * first configuration, less a margin for block clocks; a deposit found again is absorbed by its
 * workflow ID, as after any re-read.
 */

/**
 * How far before the first configuration a block's timestamp may lie and still hold a payment to it: an
 * EVM or Solana block is stamped within seconds of when it is made; a Bitcoin-family block may carry a
 * time up to two hours off (the consensus rule bounds it by the node's clock + 2 h).
 */
const MARGIN_S: Record<string, number> = { evm: 120, sol: 120, utxo: 2 * 3600 };
/**
 * The look-back reaches at most this far: 7 days, and 100,000 blocks (Solana: about 11 hours), and never
 * below the oldest block the node still serves (a pruned Bitcoin-family node, a Solana RPC's ledger).
 */
const MAX_LOOKBACK_S = 7 * 24 * 3600;
const MAX_LOOKBACK_BLOCKS = 100_000n;

/**
 * The cursor a network without one starts after: `head` (the head the watcher saw first), or an older
 * block when configurations of the network were made before that head's block (see above).
 */
export async function firstStart(adapter: ChainAdapter, db: Db, network: string, head: Cursor): Promise<Cursor> {
  if (!adapter.blockTime) return head;
  const since = await firstConfigAt(db, NETWORKS[network].addressFamily);
  if (!since) return head;
  const target = Math.max(Math.floor(since.getTime() / 1000) - MARGIN_S[NETWORKS[network].family], Math.floor(Date.now() / 1000) - MAX_LOOKBACK_S);
  const timeOf = async (h: bigint) => (await adapter.blockTime!(h)) ?? Infinity;
  if ((await timeOf(head.height)) < target) return head;
  // The highest block stamped before the target, by bisection: time(lo) < target <= time(hi).
  const oldest = (await adapter.oldestReadable?.()) ?? 0n;
  const capped = head.height > MAX_LOOKBACK_BLOCKS ? head.height - MAX_LOOKBACK_BLOCKS : 0n;
  const floor = oldest > capped ? oldest : capped;
  let lo = floor;
  let hi = head.height;
  if ((await timeOf(lo)) >= target) {
    if (floor > 0n) {
      logger.warn({ network, firstConfigurationAt: since.toISOString(), from: floor.toString() }, 'first watcher start: look-back capped; blocks before the cap are not read');
    }
    return { height: floor - 1n, hash: null };
  }
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    if ((await timeOf(mid)) < target) lo = mid;
    else hi = mid;
  }
  logger.info({ network, firstConfigurationAt: since.toISOString(), from: (lo + 1n).toString(), head: head.height.toString() }, 'first watcher start: reading from before the first configuration');
  return { height: lo, hash: null };
}
