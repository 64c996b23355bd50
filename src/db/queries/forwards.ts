import { and, eq, isNotNull, isNull, max, ne, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { oncePerDb } from '../prepared';
import { forwardTxs, payments } from '../schema';

// The ledger of signed forwards (forward_txs) beside each payment's stored plan: one owner per txid, one live
// forward per source and nonce.

/** Where a forward spends from, for the ledger of signed forwards (forward_txs). */
export interface ForwardSource {
  network: string;
  source: string;
  nonce?: number;
}

/** Another payment's forward already holds this txid: storing it would book one transfer twice. */
export class ForwardCollisionError extends Error {
  constructor(readonly txid: string, readonly holder: string) {
    super(`forward ${txid} is already the forward of payment ${holder}; not booked twice`);
    this.name = 'ForwardCollisionError';
  }
}

/** A live stored forward of the same source already holds this nonce (a lock lost mid-forward). Retryable. */
export class NonceTakenError extends Error {
  constructor(src: ForwardSource) {
    super(`nonce ${src.nonce} of ${src.source} is held by another stored forward; preparing again`);
    this.name = 'NonceTakenError';
  }
}

/**
 * Stores the signed forward once, and records its txid (and nonce) in forward_txs in the same
 * transaction; a second caller gets false and must use what is stored. A txid held by another payment
 * is a ForwardCollisionError, before anything is written. `watchMs`: how long the activity that
 * broadcasts it watches for its inclusion itself (forward_watch_until, the database's clock).
 */
export async function storeForwardOnce(db: Db, uuid: string, raw: string, txidOut: string, feePercent: string, src: ForwardSource, watchMs = 0): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [held] = await tx.select({ uuid: forwardTxs.paymentUuid }).from(forwardTxs).where(eq(forwardTxs.txid, txidOut));
    if (held && held.uuid !== uuid) throw new ForwardCollisionError(txidOut, held.uuid);
    const stored = await tx
      .update(payments)
      .set({ forwardRaw: raw, txidOut, feePercent, lastUpdate: new Date(), forwardWatchUntil: watchMs > 0 ? sql`now() + ${watchMs} * interval '1 millisecond'` : null })
      .where(and(eq(payments.uuid, uuid), isNull(payments.forwardRaw)))
      .returning({ uuid: payments.uuid });
    if (stored.length === 0) return false;
    let recorded: unknown[];
    try {
      recorded = await tx
        .insert(forwardTxs)
        .values({ txid: txidOut, paymentUuid: uuid, network: src.network, source: src.source, nonce: src.nonce === undefined ? null : BigInt(src.nonce) })
        .onConflictDoNothing({ target: forwardTxs.txid })
        .returning({ txid: forwardTxs.txid });
    } catch (e) {
      // Nothing of this plan is stored (the transaction rolls back); the caller prepares again above it.
      if ((e as { cause?: { constraint?: string } }).cause?.constraint === 'forward_txs_live_nonce_uq') throw new NonceTakenError(src);
      throw e;
    }
    if (recorded.length > 0) return true;
    // The txid was on record already: this payment's own (a plan stored again after a discard), or, written
    // since the check above, another's.
    const [holder] = await tx.select({ uuid: forwardTxs.paymentUuid }).from(forwardTxs).where(eq(forwardTxs.txid, txidOut));
    if (holder.uuid !== uuid) throw new ForwardCollisionError(txidOut, holder.uuid);
    return true;
  });
}

/** Replaces the stored plan's bytes when only its sponsor part changed (a re-signed gas top-up). */
export async function restoreForwardPlan(db: Db, uuid: string, txidOut: string, raw: string): Promise<void> {
  await db.update(payments).set({ forwardRaw: raw, lastUpdate: new Date() }).where(and(eq(payments.uuid, uuid), eq(payments.txidOut, txidOut)));
}

const nonceFloorOf = oncePerDb((db) =>
  db
    .select({ top: max(forwardTxs.nonce) })
    .from(forwardTxs)
    .where(
      and(
        eq(forwardTxs.network, sql.placeholder('network')),
        eq(forwardTxs.source, sql.placeholder('source')),
        isNull(forwardTxs.discardedAt),
        isNotNull(forwardTxs.nonce),
      ),
    )
    .prepare('gateway_nonce_floor'),
);

/** The lowest nonce a new forward from this source may take: one past every forward of it still on record. */
export async function nonceFloor(db: Db, network: string, source: string): Promise<number> {
  const [row] = await nonceFloorOf(db).execute({ network, source });
  return row?.top === null || row?.top === undefined ? 0 : Number(row.top) + 1;
}

const rivalForwardsOf = oncePerDb((db) =>
  db
    .select({ txid: forwardTxs.txid })
    .from(forwardTxs)
    .where(
      and(
        eq(forwardTxs.network, sql.placeholder('network')),
        eq(forwardTxs.source, sql.placeholder('source')),
        eq(forwardTxs.nonce, sql.placeholder('nonce')),
        ne(forwardTxs.txid, sql.placeholder('txid')),
      ),
    )
    .prepare('gateway_rival_forwards'),
);

/** Our other signed transactions at the same source and nonce: the only rivals that can make a plan moot. */
export async function rivalForwards(db: Db, network: string, source: string, nonce: number, txid: string): Promise<string[]> {
  const rows = await rivalForwardsOf(db).execute({ network, source, nonce: String(nonce), txid });
  return rows.map((r) => r.txid);
}

/**
 * Clears a stored forward only if it is still the one named (see activities/deposit.ts), and marks its
 * txid discarded in forward_txs; the txid stays recorded as this payment's, never anyone else's.
 */
export async function discardForwardIf(db: Db, uuid: string, txidOut: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const cleared = await tx
      .update(payments)
      .set({ forwardRaw: null, txidOut: null, lastUpdate: new Date() })
      .where(and(eq(payments.uuid, uuid), eq(payments.txidOut, txidOut), isNull(payments.snapshot)))
      .returning({ uuid: payments.uuid });
    if (cleared.length === 0) return false;
    await tx.update(forwardTxs).set({ discardedAt: new Date() }).where(eq(forwardTxs.txid, txidOut));
    return true;
  });
}
