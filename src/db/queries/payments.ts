import { and, eq, gte, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../client';
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
}

/**
 * Records an observed deposit once: the deposit key is unique, so a deposit seen twice (two watchers,
 * a replayed activity) returns the row and UUID made the first time.
 */
export async function insertDeposit(db: Db, d: NewDeposit): Promise<PaymentRow> {
  await db
    .insert(payments)
    .values({
      configId: d.configId,
      ticker: d.ticker,
      network: d.network,
      depositKey: d.depositKey,
      txidIn: d.txidIn,
      vout: d.vout,
      blockNumber: d.blockNumber,
      blockHash: d.blockHash,
      valueBase: d.valueBase.toString(),
      ...(d.confirmations !== undefined ? { confirmations: d.confirmations } : {}),
      result: 'pending',
      lastUpdate: new Date(),
    })
    .onConflictDoNothing({ target: payments.depositKey });
  const [row] = await db.select().from(payments).where(eq(payments.depositKey, d.depositKey));
  return row;
}

export async function loadPayment(db: Db, uuid: string): Promise<{ payment: PaymentRow; config: ConfigRow }> {
  const rows = await db
    .select({ payment: payments, config: paymentConfigs })
    .from(payments)
    .innerJoin(paymentConfigs, eq(payments.configId, paymentConfigs.id))
    .where(eq(payments.uuid, uuid));
  if (rows.length === 0) throw new Error(`payment ${uuid} not found`);
  return rows[0];
}

export async function updatePayment(db: Db, uuid: string, set: Partial<typeof payments.$inferInsert>): Promise<void> {
  await db.update(payments).set({ ...set, lastUpdate: new Date() }).where(eq(payments.uuid, uuid));
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

/** Stores the signed forward once; a second caller gets false and must use what is stored. */
export async function storeForwardOnce(db: Db, uuid: string, raw: string, txidOut: string, feePercent: string): Promise<boolean> {
  const stored = await db
    .update(payments)
    .set({ forwardRaw: raw, txidOut, feePercent, lastUpdate: new Date() })
    .where(and(eq(payments.uuid, uuid), isNull(payments.forwardRaw)))
    .returning({ uuid: payments.uuid });
  return stored.length > 0;
}

/** Clears a stored forward only if it is still the one named (see activities/deposit.ts discardForward). */
export async function discardForwardIf(db: Db, uuid: string, txidOut: string): Promise<boolean> {
  const cleared = await db
    .update(payments)
    .set({ forwardRaw: null, txidOut: null, lastUpdate: new Date() })
    .where(and(eq(payments.uuid, uuid), eq(payments.txidOut, txidOut), isNull(payments.snapshot)))
    .returning({ uuid: payments.uuid });
  return cleared.length > 0;
}

/** Stores the confirmed snapshot once; the first one written is the one every delivery sends. */
export async function storeSnapshotOnce(
  db: Db,
  uuid: string,
  set: { snapshot: unknown; price: string | null; forwardedBase: bigint; feeBase: bigint },
): Promise<boolean> {
  const stored = await db
    .update(payments)
    .set({
      snapshot: set.snapshot,
      price: set.price,
      forwardedBase: set.forwardedBase.toString(),
      feeBase: set.feeBase.toString(),
      result: 'sent',
      lastUpdate: new Date(),
    })
    .where(and(eq(payments.uuid, uuid), isNull(payments.snapshot)))
    .returning({ uuid: payments.uuid });
  return stored.length > 0;
}

/**
 * Forwarded payments of a callback host in the last 30 days with their value and price, for the
 * rolling volume tier. The host is matched on the stored callback URL.
 */
export async function recentForwardedOfHost(db: Db, host: string, since: Date) {
  return db
    .select({ valueBase: payments.valueBase, price: payments.price, ticker: payments.ticker })
    .from(payments)
    .innerJoin(paymentConfigs, eq(payments.configId, paymentConfigs.id))
    .where(
      and(
        inArray(payments.result, ['sent', 'done']),
        gte(payments.createdAt, since),
        sql`lower(substring(${paymentConfigs.callbackUrl} from '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/@?#]*@)?([^/:?#]+)')) = ${host.toLowerCase()}`,
      ),
    );
}
