import { and, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { $, oncePerDb, preparedStatement, rowsOf } from '../prepared';
import { forwardTxs, paymentConfigs, payments } from '../schema';

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
 * statement; a second caller gets false and must use what is stored. A txid held by another payment
 * is a ForwardCollisionError, before anything is written. `watchMs`: how long the activity that
 * broadcasts it watches for its inclusion itself (forward_watch_until, the database's clock).
 */
export async function storeForwardOnce(db: Db, uuid: string, raw: string, txidOut: string, src: ForwardSource, watchMs = 0): Promise<boolean> {
  let result: { open: number; stored: number; held: string | null };
  try {
    [result] = rowsOf<typeof result>(
      await storeForwardStatement(db, {
        uuid,
        raw,
        txid: txidOut,
        network: src.network,
        source: src.source,
        nonce: src.nonce === undefined ? null : String(src.nonce),
        now: new Date().toISOString(),
        watchMs: Math.max(0, Math.round(watchMs)),
      }),
    );
  } catch (e) {
    // Nothing of this plan is stored (the statement is atomic); the caller prepares again above it.
    if ((e as { cause?: { constraint?: string } }).cause?.constraint === 'forward_txs_live_nonce_uq') throw new NonceTakenError(src);
    throw e;
  }
  if (result.held !== null && result.held !== uuid) throw new ForwardCollisionError(txidOut, result.held);
  if (result.stored > 0) return true;
  if (result.open === 0) return false;
  // Open, yet not stored: the txid was recorded by another payment after this statement's snapshot (its
  // insert waited for that one and did nothing). Nothing of this plan was written.
  const [holder] = await db.select({ uuid: forwardTxs.paymentUuid }).from(forwardTxs).where(eq(forwardTxs.txid, txidOut));
  throw new ForwardCollisionError(txidOut, holder?.uuid ?? 'unknown');
}

/**
 * storeForwardOnce in one statement (one round trip where a transaction of four statements took five).
 * `pay`: the payment, locked, only while it has no stored plan. `ins`: the txid recorded as its forward
 * (a txid already on record is left as it is; the live-nonce index refuses a second plan at a nonce,
 * which fails the whole statement). `upd`: the plan stored, only when the txid is now this payment's
 * (just recorded, or its own from before a discard). `held`: the txid's holder as the statement's
 * snapshot saw it.
 */
const storeForwardStatement = preparedStatement(
  'gateway_store_forward_once',
  sql`WITH pay AS (
    SELECT uuid FROM payments WHERE uuid = ${$('uuid')}::uuid AND forward_raw IS NULL FOR UPDATE
  ), ins AS (
    INSERT INTO forward_txs (txid, payment_uuid, network, source, nonce)
    SELECT ${$('txid')}::text, pay.uuid, ${$('network')}::text, ${$('source')}::text, ${$('nonce')}::bigint FROM pay
    ON CONFLICT (txid) DO NOTHING
    RETURNING txid
  ), upd AS (
    UPDATE payments SET
      forward_raw = ${$('raw')}::text,
      txid_out = ${$('txid')}::text,
      last_update = ${$('now')}::timestamptz,
      forward_watch_until = CASE WHEN ${$('watchMs')}::integer > 0 THEN now() + ${$('watchMs')}::integer * interval '1 millisecond' END
    WHERE uuid IN (SELECT uuid FROM pay)
      AND (EXISTS (SELECT 1 FROM ins)
        OR EXISTS (SELECT 1 FROM forward_txs WHERE txid = ${$('txid')}::text AND payment_uuid = ${$('uuid')}::uuid))
    RETURNING uuid
  )
  SELECT (SELECT count(*) FROM pay)::integer AS open,
    (SELECT count(*) FROM upd)::integer AS stored,
    (SELECT payment_uuid::text FROM forward_txs WHERE txid = ${$('txid')}::text) AS held`,
);

/** Replaces the stored plan's bytes when only its sponsor part changed (a re-signed gas top-up). */
export async function restoreForwardPlan(db: Db, uuid: string, txidOut: string, raw: string): Promise<void> {
  await db.update(payments).set({ forwardRaw: raw, lastUpdate: new Date() }).where(and(eq(payments.uuid, uuid), eq(payments.txidOut, txidOut)));
}

/**
 * The highest nonce on record of a source: its forwards not discarded, and its sweeps (src/db/queries/sweeps.ts)
 * not dropped. A sweep stored before its broadcast holds its nonce as a stored forward does.
 */
const nonceFloorStatement = preparedStatement(
  'gateway_nonce_floor',
  sql`SELECT GREATEST(
    (SELECT max(nonce) FROM forward_txs
      WHERE network = ${$('network')}::text AND source = ${$('source')}::text AND discarded_at IS NULL AND nonce IS NOT NULL),
    (SELECT max(nonce) FROM sweeps
      WHERE network = ${$('network')}::text AND source = ${$('source')}::text AND status <> 'dropped' AND nonce IS NOT NULL)
  )::text AS top`,
);

/** The lowest nonce a new forward (or sweep) from this source may take: one past every one of it still on record. */
export async function nonceFloor(db: Db, network: string, source: string): Promise<number> {
  const [row] = rowsOf<{ top: string | null }>(await nonceFloorStatement(db, { network, source }));
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
 * Clears a stored forward only if it is still the one named (see activities/forward.ts), and marks its
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

/**
 * The native coin at `addressIn` that deposits on record there still need: every payment of the native
 * ticker there not yet sent on (pending, processing, failed: a failed deposit waits for the operator).
 */
export async function nativeReserved(db: Db, network: string, addressIn: string, nativeTicker: string): Promise<bigint> {
  const [row] = await db
    .select({ total: sql<string | null>`sum(${payments.valueBase})` })
    .from(payments)
    .innerJoin(paymentConfigs, eq(paymentConfigs.id, payments.configId))
    .where(and(eq(payments.network, network), eq(payments.ticker, nativeTicker), eq(paymentConfigs.addressIn, addressIn), inArray(payments.result, ['pending', 'processing', 'failed'])));
  return BigInt(row?.total ?? 0);
}
