import { and, eq, gte, inArray, isNotNull, isNull, max, ne, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { oncePerDb, slot } from '../prepared';
import { callbackHostSql, forwardTxs, paymentConfigs, payments } from '../schema';
import type { PaymentResult } from '../../domain/lifecycle';

export type PaymentRow = typeof payments.$inferSelect;
export type ConfigRow = typeof paymentConfigs.$inferSelect;

export interface NewDeposit {
  configId: string;
  ticker: string;
  network: string;
  depositKey: string;
  txidIn: string;
  vout: number | null;
  blockNumber: bigint;
  blockHash: string;
  valueBase: bigint;
  /** Confirmations known when the deposit was detected (the watcher's count); later checks update it. */
  confirmations?: number;
  /** Where the watcher signals finality (src/domain/finality.ts); null leaves it to the workflow's own reads. */
  dueHeight?: bigint;
}

/**
 * Records an observed deposit once: the deposit key is unique, so a deposit seen twice (two watchers,
 * a replayed activity) returns the row and UUID made the first time.
 */
const depositRow = (d: NewDeposit) => ({
  configId: d.configId,
  ticker: d.ticker,
  network: d.network,
  depositKey: d.depositKey,
  txidIn: d.txidIn,
  vout: d.vout,
  blockNumber: d.blockNumber,
  blockHash: d.blockHash,
  dueHeight: d.dueHeight,
  valueBase: d.valueBase.toString(),
  ...(d.confirmations !== undefined ? { confirmations: d.confirmations } : {}),
  result: 'pending',
  lastUpdate: new Date(),
});

/**
 * Records a block's deposits in one statement per 1,000 (a deposit already recorded stays as it is): the
 * watcher's write, so that a burst in a block costs one round trip, not two per deposit.
 */
export async function insertDeposits(db: Db, list: NewDeposit[]): Promise<void> {
  for (let i = 0; i < list.length; i += 1000) {
    await db.insert(payments).values(list.slice(i, i + 1000).map(depositRow)).onConflictDoNothing({ target: payments.depositKey });
  }
}

/** The row written now, or (a deposit recorded before: the watcher's batch, a replayed activity) the one written first. */
export async function insertDeposit(db: Db, d: NewDeposit): Promise<PaymentRow> {
  const [made] = await db.insert(payments).values(depositRow(d)).onConflictDoNothing({ target: payments.depositKey }).returning();
  if (made) return made;
  const [row] = await db.select().from(payments).where(eq(payments.depositKey, d.depositKey));
  return row;
}

const loadConfigOf = oncePerDb((db) =>
  db.select().from(paymentConfigs).where(eq(paymentConfigs.id, sql.placeholder('id'))).prepare('gateway_load_config'),
);

export async function loadConfig(db: Db, id: string): Promise<ConfigRow> {
  const [row] = await loadConfigOf(db).execute({ id });
  if (!row) throw new Error(`payment configuration ${id} not found`);
  return row;
}

/** The payment-with-configuration read, built once per database handle (every activity of a deposit reads it, some twice). */
function loadStatement(db: Db) {
  return db
    .select({ payment: payments, config: paymentConfigs })
    .from(payments)
    .innerJoin(paymentConfigs, eq(payments.configId, paymentConfigs.id))
    .where(eq(payments.uuid, sql.placeholder('uuid')))
    .prepare('gateway_load_payment');
}
const loadStatementOf = oncePerDb(loadStatement);

export async function loadPayment(db: Db, uuid: string): Promise<{ payment: PaymentRow; config: ConfigRow }> {
  const rows = await loadStatementOf(db).execute({ uuid });
  if (rows.length === 0) throw new Error(`payment ${uuid} not found`);
  return rows[0];
}

export async function updatePayment(db: Db, uuid: string, set: Partial<typeof payments.$inferInsert>): Promise<void> {
  await db.update(payments).set({ ...set, lastUpdate: new Date() }).where(eq(payments.uuid, uuid));
}

/*
 * The statements every deposit runs, prepared once per database handle (src/db/prepared.ts): drizzle builds
 * their text once, and PostgreSQL parses each once per connection. Their values go to the driver as given
 * (`slot`): times as ISO strings, JSON as its text.
 */
const storeConfirmationsOf = oncePerDb((db) =>
  db
    .update(payments)
    .set({ confirmations: slot('confirmations'), lastUpdate: slot('now') })
    .where(eq(payments.uuid, sql.placeholder('uuid')))
    .prepare('gateway_store_confirmations'),
);

/** The confirmations a reading shows, stored for /logs. */
export async function storeConfirmations(db: Db, uuid: string, confirmations: number): Promise<void> {
  await storeConfirmationsOf(db).execute({ uuid, confirmations, now: new Date().toISOString() });
}

const recordFinalityOf = oncePerDb((db) =>
  db
    .update(payments)
    .set({
      // A null reading keeps the stored count.
      confirmations: sql`coalesce(${sql.placeholder('confirmations')}::integer, ${payments.confirmations})`,
      result: sql`CASE WHEN ${payments.result} = 'pending' THEN 'processing' ELSE ${payments.result} END`,
      lastUpdate: slot('now'),
    })
    .where(eq(payments.uuid, sql.placeholder('uuid')))
    .prepare('gateway_record_finality'),
);

/**
 * A reading that found the deposit final, in one write: the confirmations it shows (unless undefined) and
 * the result moved from pending to processing (any other result stays).
 */
export async function recordFinality(db: Db, uuid: string, confirmations: number | undefined): Promise<void> {
  await recordFinalityOf(db).execute({ uuid, confirmations: confirmations ?? null, now: new Date().toISOString() });
}

/** Moves the result only from one of `from`; returns whether it moved (guards against going backwards). */
export async function moveResult(db: Db, uuid: string, from: PaymentResult[], to: PaymentResult, reason?: string): Promise<boolean> {
  const moved = await db
    .update(payments)
    .set({ result: to, lastUpdate: new Date(), ...(reason !== undefined ? { reason } : {}) })
    .where(and(eq(payments.uuid, uuid), inArray(payments.result, from)))
    .returning({ uuid: payments.uuid });
  return moved.length > 0;
}

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

const storeSnapshotOf = oncePerDb((db) =>
  db
    .update(payments)
    .set({
      snapshot: slot('snapshot'),
      price: slot('price'),
      forwardedBase: slot('forwardedBase'),
      feeBase: slot('feeBase'),
      result: 'sent',
      lastUpdate: slot('now'),
    })
    .where(and(eq(payments.uuid, sql.placeholder('uuid')), isNull(payments.snapshot)))
    .returning({ uuid: payments.uuid })
    .prepare('gateway_store_snapshot'),
);

/** Stores the confirmed snapshot once; the first one written is the one every delivery sends. */
export async function storeSnapshotOnce(
  db: Db,
  uuid: string,
  set: { snapshot: unknown; price: string | null; forwardedBase: bigint; feeBase: bigint },
): Promise<boolean> {
  const stored = await storeSnapshotOf(db).execute({
    uuid,
    snapshot: JSON.stringify(set.snapshot),
    price: set.price,
    forwardedBase: set.forwardedBase.toString(),
    feeBase: set.feeBase.toString(),
    now: new Date().toISOString(),
  });
  return stored.length > 0;
}

const forwardedValueOf = oncePerDb((db) =>
  db
    // A price that is not a plain decimal counts as none (the callbacks omit it too: isValidPrice).
    .select({
      ticker: payments.ticker,
      valueTimesPrice: sql<string>`coalesce(sum(${payments.valueBase} * (CASE WHEN ${payments.price} ~ '^[0-9]+([.][0-9]+)?$' THEN ${payments.price}::numeric END)), 0)::text`,
    })
    .from(payments)
    .innerJoin(paymentConfigs, eq(payments.configId, paymentConfigs.id))
    .where(
      and(
        inArray(payments.result, ['sent', 'done']),
        gte(payments.createdAt, sql.placeholder('since')),
        isNotNull(payments.price),
        sql`${callbackHostSql(paymentConfigs.callbackUrl)} = ${sql.placeholder('host')}`,
      ),
    )
    .groupBy(payments.ticker)
    .prepare('gateway_forwarded_value_of_host'),
);

/**
 * Per ticker, the sum of value_base × price of the callback host's payments forwarded (sent or done) since
 * `since`: the host's configurations come from their expression index, their payments from the config index,
 * and PostgreSQL sums them exactly (numeric), so a forward's fee tier costs the same at any merchant volume.
 */
export async function forwardedValueOfHost(db: Db, host: string, since: Date): Promise<Array<{ ticker: string; valueTimesPrice: string }>> {
  return forwardedValueOf(db).execute({ host: host.toLowerCase(), since: since.toISOString() });
}
