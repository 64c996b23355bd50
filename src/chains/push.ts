import { and, eq, gt, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import pLimit from 'p-limit';
import type { Db } from '../db/client';
import { payments } from '../db/schema';
import type { ScanBatch } from './adapter';

import type { ChainHint } from '../../workflows/signals';

export type { ChainHint };

export type SignalDeposit = (workflowId: string, hint: ChainHint) => Promise<void>;

/** Calls to Temporal the watcher has in flight at once (workflow starts, hints): a burst is not serialised. */
export const TEMPORAL_CALLS_AT_ONCE = 16;

/** Bind-parameter headroom for the forward lookup (a block of a busy chain lists thousands of txids). */
const MAX_TXIDS = 10_000;

/**
 * After the watcher read a batch of blocks on top of `before` (the cursor it started from): signals the
 * deposits whose due height the batch passed, those at or above a reorganised height, and those whose
 * forward one of the blocks holds (once the activity that broadcast it no longer watches for it:
 * forward_watch_until). At most three indexed queries per batch, each returning only the deposits
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
    const due = await db
      .select({ key: payments.depositKey })
      .from(payments)
      .where(and(eq(payments.network, network), eq(payments.result, 'pending'), gt(payments.dueHeight, floor), lte(payments.dueHeight, tip)));
    for (const r of due) hints.set(r.key, { kind: 'due', height });
  }
  if (rewindTo !== null) {
    // Deposits in the blocks read again: their block may be gone. due_height ≥ block height, so the
    // partial index on (network, due_height) serves this too.
    const moved = await db
      .select({ key: payments.depositKey, block: payments.blockNumber })
      .from(payments)
      .where(and(eq(payments.network, network), eq(payments.result, 'pending'), gt(payments.dueHeight, rewindTo)));
    for (const r of moved) if (r.block !== null && r.block > rewindTo) hints.set(r.key, { kind: 'recheck', height });
  }
  const txids = batch.blocks.flatMap((b) => b.txids ?? []);
  for (let i = 0; i < txids.length; i += MAX_TXIDS) {
    const included = await db
      .select({ key: payments.depositKey })
      .from(payments)
      .where(
        and(
          inArray(payments.txidOut, txids.slice(i, i + MAX_TXIDS)),
          eq(payments.result, 'processing'),
          // Not while the activity that broadcast it watches for it itself: it reads this block too (its last
          // reading comes after the window), and a hint that came meanwhile would cost the workflow a task.
          or(isNull(payments.forwardWatchUntil), lte(payments.forwardWatchUntil, sql`now()`)),
        ),
      );
    for (const r of included) hints.set(r.key, { kind: 'forward', height });
  }
  const limit = pLimit(TEMPORAL_CALLS_AT_ONCE);
  await Promise.all([...hints].map(([key, hint]) => limit(() => signal(key, hint))));
  return hints.size;
}
