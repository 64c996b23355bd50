import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { rowsOf } from '../prepared';
import { paymentConfigs, payments, sweeps } from '../schema';

// The sweeps ledger (schema.ts `sweeps`) and what the sweep reads of configurations and payments.

export type SweepRow = typeof sweeps.$inferSelect;

/** The results of a payment whose deposit is still to be forwarded: its address is never swept. */
export const LIVE_RESULTS = ['pending', 'processing'] as const;

/** Configurations of the given address families: their deposit addresses. */
export async function depositConfigs(db: Db, families: string[]) {
  if (families.length === 0) return [];
  return db
    .select({
      id: paymentConfigs.id,
      ticker: paymentConfigs.ticker,
      addressIn: paymentConfigs.addressIn,
      addressOut: paymentConfigs.addressOut,
      derivationIndex: paymentConfigs.derivationIndex,
    })
    .from(paymentConfigs)
    .where(inArray(paymentConfigs.family, families));
}

/** How many payments of each configuration and ticker ended in each result; `below`: failed for being below the minimum. */
export interface PaymentTally {
  configId: string;
  network: string;
  ticker: string;
  result: string;
  below: boolean;
  n: number;
}

/**
 * Payments to configurations of these address families, counted by configuration, ticker and result. A deposit
 * judged below the minimum is told apart by the fixed form of its recorded reason (activities/observed.ts
 * judgeObserved): a label for the operator only, nothing is decided by it.
 */
export async function paymentTallies(db: Db, families: string[]): Promise<PaymentTally[]> {
  if (families.length === 0) return [];
  const rows = rowsOf<{ config_id: string; network: string; ticker: string; result: string; below: boolean; n: number }>(
    await db.execute(sql`SELECT p.config_id::text AS config_id, p.network, p.ticker, p.result,
        coalesce(p.result = 'failed' AND p.reason ~ '^deposit .* is below the minimum ', false) AS below, count(*)::integer AS n
      FROM payments p JOIN payment_configs c ON c.id = p.config_id
      WHERE c.family IN (${sql.join(families.map((f) => sql`${f}`), sql`, `)})
      GROUP BY 1, 2, 3, 4, 5`),
  );
  return rows.map((r) => ({ configId: r.config_id, network: r.network, ticker: r.ticker, result: r.result, below: r.below, n: r.n }));
}

/** Whether a payment to this deposit address on this network is still live (LIVE_RESULTS): read under the forward lock. */
export async function hasLivePayment(db: Db, network: string, addressIn: string): Promise<boolean> {
  const rows = await db
    .select({ uuid: payments.uuid })
    .from(payments)
    .innerJoin(paymentConfigs, eq(payments.configId, paymentConfigs.id))
    .where(and(eq(payments.network, network), eq(paymentConfigs.addressIn, addressIn), inArray(payments.result, [...LIVE_RESULTS])))
    .limit(1);
  return rows.length > 0;
}

/** The open sweep of a source and asset (at most one: sweeps_open_uq). */
export async function openSweep(db: Db, network: string, source: string, ticker: string): Promise<SweepRow | undefined> {
  const [row] = await db
    .select()
    .from(sweeps)
    .where(and(eq(sweeps.network, network), eq(sweeps.source, source), eq(sweeps.ticker, ticker), eq(sweeps.status, 'open')));
  return row;
}

/** Every open sweep: a run re-sends or settles them whatever the balances now are. */
export async function openSweeps(db: Db): Promise<SweepRow[]> {
  return db.select().from(sweeps).where(eq(sweeps.status, 'open'));
}

export interface NewSweep {
  txid: string;
  network: string;
  ticker: string;
  source: string;
  destination: string;
  amount: bigint;
  fee: bigint;
  plan: string;
  nonce?: number;
}

/** Stores a signed sweep as open, before it is broadcast; false when an open one of the source and asset is stored already. */
export async function storeSweepOnce(db: Db, s: NewSweep): Promise<boolean> {
  const stored = await db
    .insert(sweeps)
    .values({
      txid: s.txid, network: s.network, ticker: s.ticker, source: s.source, destination: s.destination,
      amount: s.amount.toString(), fee: s.fee.toString(), plan: s.plan, nonce: s.nonce === undefined ? null : BigInt(s.nonce), status: 'open',
    })
    .onConflictDoNothing()
    .returning({ txid: sweeps.txid });
  return stored.length > 0;
}

/** Settles an open sweep (confirmed, failed, dropped); a sweep already settled stays as it is. */
export async function settleSweep(db: Db, txid: string, status: 'confirmed' | 'failed' | 'dropped', reason?: string): Promise<void> {
  await db
    .update(sweeps)
    .set({ status, reason: reason ?? null, updatedAt: new Date() })
    .where(and(eq(sweeps.txid, txid), eq(sweeps.status, 'open')));
}

/** Notes on an open sweep: the node's refusal, or the height of a `replaceable` reading. */
export async function noteSweep(db: Db, txid: string, note: { reason?: string; replaceableAt?: bigint }): Promise<void> {
  await db
    .update(sweeps)
    .set({ ...(note.reason !== undefined ? { reason: note.reason } : {}), ...(note.replaceableAt !== undefined ? { replaceableAt: note.replaceableAt } : {}), updatedAt: new Date() })
    .where(and(eq(sweeps.txid, txid), eq(sweeps.status, 'open')));
}

/** A sweep's plan whose sponsor part was signed again (an ERC-20 sweep's gas top-up), stored before it is sent. */
export async function restoreSweepPlan(db: Db, txid: string, plan: string): Promise<void> {
  await db.update(sweeps).set({ plan, updatedAt: new Date() }).where(eq(sweeps.txid, txid));
}
