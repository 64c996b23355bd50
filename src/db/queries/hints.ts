import { and, eq, gt, inArray, isNotNull, isNull, lte, or, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { forwardTxs, payments } from '../schema';

/**
 * What the watcher's hints are chosen from (src/detection/push.ts): each query indexed, returning only the
 * deposits concerned. Lists of txids, sources or deposit keys are sent in chunks of MAX_LIST (bind-parameter
 * headroom: a block of a busy chain lists thousands of transactions).
 */
const MAX_LIST = 10_000;

/** Not while the activity that broadcast the forward watches for it itself (forward_watch_until). */
const unwatched = () => or(isNull(payments.forwardWatchUntil), lte(payments.forwardWatchUntil, sql`now()`));

async function chunked<T, R>(items: T[], read: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += MAX_LIST) out.push(...(await read(items.slice(i, i + MAX_LIST))));
  return out;
}

/** Pending deposits of the network whose due height is in (above, upTo]. */
export async function pendingDueBetween(db: Db, network: string, above: bigint, upTo: bigint): Promise<Array<{ key: string }>> {
  return db
    .select({ key: payments.depositKey })
    .from(payments)
    .where(and(eq(payments.network, network), eq(payments.result, 'pending'), gt(payments.dueHeight, above), lte(payments.dueHeight, upTo)));
}

/** Pending deposits of the network due above `height` (due_height ≥ block height: the same partial index), with their block. */
export async function pendingDueAbove(db: Db, network: string, height: bigint): Promise<Array<{ key: string; block: bigint | null }>> {
  return db
    .select({ key: payments.depositKey, block: payments.blockNumber })
    .from(payments)
    .where(and(eq(payments.network, network), eq(payments.result, 'pending'), gt(payments.dueHeight, height)));
}

/** Processing payments, not watched by their forward's activity, whose stored forward is one of `txids`. */
export async function forwardsAmong(db: Db, txids: string[]): Promise<Array<{ key: string }>> {
  return chunked(txids, (chunk) =>
    db
      .select({ key: payments.depositKey })
      .from(payments)
      .where(and(inArray(payments.txidOut, chunk), eq(payments.result, 'processing'), unwatched())),
  );
}

/** The live forwards (with a nonce) of processing, unwatched payments sent from one of `sources` on the network. */
export async function liveForwardsFrom(db: Db, network: string, sources: string[]): Promise<Array<{ key: string; txid: string; source: string; nonce: bigint | null }>> {
  return chunked(sources, (chunk) =>
    db
      .select({ key: payments.depositKey, txid: forwardTxs.txid, source: forwardTxs.source, nonce: forwardTxs.nonce })
      .from(forwardTxs)
      .innerJoin(payments, and(eq(payments.uuid, forwardTxs.paymentUuid), eq(payments.txidOut, forwardTxs.txid)))
      .where(
        and(
          eq(forwardTxs.network, network), inArray(forwardTxs.source, chunk), isNull(forwardTxs.discardedAt),
          isNotNull(forwardTxs.nonce), eq(payments.result, 'processing'), unwatched(),
        ),
      ),
  );
}

/** Processing, unwatched payments whose deposit key is one of `keys`, with their stored forward's txid. */
export async function processingByDepositKey(db: Db, keys: string[]): Promise<Array<{ key: string; txid: string | null }>> {
  return chunked(keys, (chunk) =>
    db
      .select({ key: payments.depositKey, txid: payments.txidOut })
      .from(payments)
      .where(and(inArray(payments.depositKey, chunk), eq(payments.result, 'processing'), unwatched())),
  );
}
