import pLimit from 'p-limit';
import type { Db } from '../db/client';
import { forwardsAmong, liveForwardsFrom, pendingDueAbove, pendingDueBetween, processingByDepositKey } from '../db/queries/hints';
import { depositKey, type ScanBatch } from '../chains/adapter';
import type { ChainHint } from '../domain/hints';

export type { ChainHint };

export type SignalDeposit = (workflowId: string, hint: ChainHint) => Promise<void>;

/**
 * Calls to Temporal the watcher has in flight at once (workflow starts, hints): a burst is not serialised,
 * and a block's hints go out in one wave rather than several (docs/decisions/0001-pushed-hints.md).
 */
export const TEMPORAL_CALLS_AT_ONCE = 64;

/**
 * After the watcher read a batch of blocks on top of `before` (the cursor it started from): signals the
 * deposits whose due height the batch passed, those at or above a reorganised height, those whose
 * forward one of the blocks holds, and those whose forward another transaction of the blocks took the
 * place of (dropped: the same nonce of its source, or the deposit output it spends), the last two once the
 * activity that broadcast the forward no longer watches for it (forward_watch_until). At most five indexed
 * queries per batch (chunked on a block of thousands of transactions), each returning only the deposits
 * concerned, so the cost per block does not grow with the number of deposits waiting.
 * Returns the number of signals sent; a signal that fails is logged by `signal` and dropped.
 */
export async function pushHints(db: Db, network: string, before: bigint | null, batch: ScanBatch, signal: SignalDeposit): Promise<number> {
  const last = batch.blocks[batch.blocks.length - 1];
  const tip = last && last.height > batch.cursor.height ? last.height : batch.cursor.height;
  const hints = new Map<string, ChainHint>();
  const height = tip.toString();
  // A rewound batch starts below the old cursor: the blocks from its first one were read again.
  const first = batch.blocks[0]?.height;
  const rewindTo = batch.rewound ? (first !== undefined ? first - 1n : batch.cursor.height) : null;
  const floor = rewindTo ?? before;
  if (floor !== null && tip > floor) {
    for (const r of await pendingDueBetween(db, network, floor, tip)) hints.set(r.key, { kind: 'due', height });
  }
  if (rewindTo !== null) {
    // Deposits in the blocks read again: their block may be gone. due_height ≥ block height, so the
    // partial index on (network, due_height) serves this too.
    for (const r of await pendingDueAbove(db, network, rewindTo)) if (r.block !== null && r.block > rewindTo) hints.set(r.key, { kind: 'recheck', height });
  }
  const txids = batch.blocks.flatMap((b) => b.txids ?? []);
  // Not while the activity that broadcast the forward watches for it itself: it reads this block too (its
  // last reading comes after the window), and a hint that came meanwhile would cost the workflow a task.
  for (const r of await forwardsAmong(db, txids)) hints.set(r.key, { kind: 'forward', height });
  const inBlocks = new Set(txids);
  const dropped = (key: string, txid: string | null) => {
    if (txid !== null && !inBlocks.has(txid) && !hints.has(key)) hints.set(key, { kind: 'dropped', height });
  };
  // EVM: the live forwards of the blocks' senders (forward_txs' index on network, source, nonce) whose
  // nonce a transaction of the blocks used.
  const nonces = batch.blocks.flatMap((b) => b.nonces ?? []);
  const taken = new Set(nonces.map((n) => `${n.source}:${n.nonce}`));
  const sources = [...new Set(nonces.map((n) => n.source))];
  for (const r of await liveForwardsFrom(db, network, sources)) if (taken.has(`${r.source}:${r.nonce}`)) dropped(r.key, r.txid);
  // UTXO: the payments whose deposit output a transaction of the blocks spent (the unique deposit key).
  const spent = batch.blocks.flatMap((b) => b.outpoints ?? []).map((o) => depositKey({ network, txid: o.txid, index: o.vout }));
  for (const r of await processingByDepositKey(db, spent)) dropped(r.key, r.txid);
  const limit = pLimit(TEMPORAL_CALLS_AT_ONCE);
  await Promise.all([...hints].map(([key, hint]) => limit(() => signal(key, hint))));
  return hints.size;
}
