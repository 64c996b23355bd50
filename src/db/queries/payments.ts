import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { oncePerDb, slot } from '../prepared';
import { paymentConfigs, payments } from '../schema';
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
 * watcher's write, so that a burst in a block costs one round trip, not two per deposit. Answers the ticker
 * of each row inserted now (a metric counts each deposit once).
 */
export async function insertDeposits(db: Db, list: NewDeposit[]): Promise<string[]> {
  const made: string[] = [];
  for (let i = 0; i < list.length; i += 1000) {
    const rows = await db
      .insert(payments)
      .values(list.slice(i, i + 1000).map(depositRow))
      .onConflictDoNothing({ target: payments.depositKey })
      .returning({ ticker: payments.ticker });
    for (const r of rows) made.push(r.ticker);
  }
  return made;
}

/**
 * The row written now (`made`), or (a deposit recorded before: the watcher's batch, a replayed activity) the
 * one written first.
 */
export async function recordDeposit(db: Db, d: NewDeposit): Promise<{ row: PaymentRow; made: boolean }> {
  const [made] = await db.insert(payments).values(depositRow(d)).onConflictDoNothing({ target: payments.depositKey }).returning();
  if (made) return { row: made, made: true };
  const [row] = await db.select().from(payments).where(eq(payments.depositKey, d.depositKey));
  return { row, made: false };
}

/**
 * Takes up again a deposit whose payment failed before anything was forwarded (no forward stored, no
 * confirmed snapshot), for a new lifecycle of the same deposit: back to pending, counted from the block it
 * is in now. Only a new workflow run of the deposit asks, and Temporal starts one only after a run that
 * failed (a reorganised deposit mined again). Answers the row as it is now (unchanged when not revivable).
 */
export async function reviveDeposit(db: Db, row: PaymentRow, d: NewDeposit): Promise<PaymentRow> {
  if (row.result !== 'failed' || row.forwardRaw !== null || row.snapshot !== null) return row;
  const [revived] = await db
    .update(payments)
    .set({
      result: 'pending',
      reason: null,
      blockNumber: d.blockNumber,
      blockHash: d.blockHash,
      dueHeight: d.dueHeight ?? null,
      confirmations: d.confirmations ?? 0,
      lastUpdate: new Date(),
    })
    .where(and(eq(payments.uuid, row.uuid), eq(payments.result, 'failed'), isNull(payments.forwardRaw), isNull(payments.snapshot)))
    .returning();
  return revived ?? row;
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

const storeFeePercentOf = oncePerDb((db) =>
  db
    .update(payments)
    .set({ feePercent: slot('feePercent'), lastUpdate: slot('now') })
    .where(and(eq(payments.uuid, sql.placeholder('uuid')), eq(payments.result, 'pending')))
    .prepare('gateway_store_fee_percent'),
);

/**
 * The fee percent chosen when the deposit was judged (SPEC 3): stored once, while the payment is pending,
 * and the one its forward takes its commission by and its confirmed callback reports.
 */
export async function storeFeePercent(db: Db, uuid: string, feePercent: string): Promise<void> {
  await storeFeePercentOf(db).execute({ uuid, feePercent, now: new Date().toISOString() });
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
