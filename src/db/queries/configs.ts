import { asc, eq, inArray, and, sql } from 'drizzle-orm';
import type { Db } from '../client';
import type { Tx } from './public-material';
import { chainCursors, configTickers, deliveryAttempts, derivationCounters, paymentConfigs, payments } from '../schema';

export type PaymentConfigRow = typeof paymentConfigs.$inferSelect;
export type PaymentRowForLogs = typeof payments.$inferSelect;
export type DeliveryAttemptRow = typeof deliveryAttempts.$inferSelect;

export interface NewPaymentConfig {
  callbackUrl: string;
  ticker: string;
  family: string;
  addressOut: string;
  notifyPending: boolean;
  notifyConfirmations: number;
  post: number;
  json: number;
  convert: number;
  priority: string;
  minimumTransactionBase: bigint;
}

export async function findConfigByCallback(db: Db, callbackUrl: string): Promise<PaymentConfigRow | undefined> {
  const [row] = await db.select().from(paymentConfigs).where(eq(paymentConfigs.callbackUrl, callbackUrl));
  return row;
}

/** Whether an address is the address_in of a configuration of the family (address_in is stored canonical). */
export async function isDepositAddress(db: Db, family: string, address: string): Promise<boolean> {
  const rows = await db
    .select({ id: paymentConfigs.id })
    .from(paymentConfigs)
    .where(and(eq(paymentConfigs.family, family), eq(paymentConfigs.addressIn, address)))
    .limit(1);
  return rows.length > 0;
}

class AlreadyExists extends Error {}

/**
 * The configuration of a callback URL, created once. A new one takes the next derivation index of its
 * address family and its address_in from `deriveAddressIn(index)`, in one transaction: the counter row
 * lock orders concurrent creates of a family, and the unique callback_url index makes every create but
 * the first find the existing row (the loser rolls back, so its counter step leaves no gap).
 * `created` says whether this call made it; the caller compares families.
 */
export async function createOrGetConfig(
  db: Db,
  input: NewPaymentConfig,
  deriveAddressIn: ((index: bigint) => string) | { allocate: (tx: Tx) => Promise<{ index: bigint; address: string }> },
): Promise<{ config: PaymentConfigRow; created: boolean }> {
  const existing = await findConfigByCallback(db, input.callbackUrl);
  if (existing) return { config: existing, created: false };
  try {
    const config = await db.transaction(async (tx) => {
      let index: bigint;
      let addressIn: string;
      if (typeof deriveAddressIn === 'function') {
        const [counter] = await tx
          .insert(derivationCounters)
          .values({ family: input.family, nextIndex: 1n })
          .onConflictDoUpdate({ target: derivationCounters.family, set: { nextIndex: sql`${derivationCounters.nextIndex} + 1` } })
          .returning({ nextIndex: derivationCounters.nextIndex });
        index = counter.nextIndex - 1n;
        addressIn = deriveAddressIn(index);
      } else {
        // A pre-derived address (no public derivation): taken in this transaction, given back on rollback.
        ({ index, address: addressIn } = await deriveAddressIn.allocate(tx));
      }
      const [row] = await tx
        .insert(paymentConfigs)
        .values({
          callbackUrl: input.callbackUrl,
          ticker: input.ticker,
          family: input.family,
          addressIn,
          addressOut: input.addressOut,
          derivationIndex: index,
          notifyPending: input.notifyPending,
          notifyConfirmations: input.notifyConfirmations,
          post: input.post,
          json: input.json,
          convert: input.convert,
          priority: input.priority,
          minimumTransactionBase: input.minimumTransactionBase.toString(),
        })
        .onConflictDoNothing({ target: paymentConfigs.callbackUrl })
        .returning();
      if (!row) throw new AlreadyExists();
      return row;
    });
    return { config, created: true };
  } catch (e) {
    if (!(e instanceof AlreadyExists)) throw e;
  }
  const winner = await findConfigByCallback(db, input.callbackUrl);
  if (!winner) throw new Error('payment configuration vanished after a callback_url conflict');
  return { config: winner, created: false };
}

/** Payments of one configuration and ticker, oldest first, each with its delivery attempts in order. */
export async function paymentsWithAttempts(
  db: Db,
  configId: string,
  ticker: string,
): Promise<Array<{ payment: PaymentRowForLogs; attempts: DeliveryAttemptRow[] }>> {
  const rows = await db
    .select()
    .from(payments)
    .where(and(eq(payments.configId, configId), eq(payments.ticker, ticker)))
    .orderBy(asc(payments.createdAt), asc(payments.uuid));
  if (rows.length === 0) return [];
  const attempts = await db
    .select()
    .from(deliveryAttempts)
    .where(inArray(deliveryAttempts.paymentUuid, rows.map((r) => r.uuid)))
    .orderBy(asc(deliveryAttempts.createdAt), asc(deliveryAttempts.id));
  const byPayment = new Map<string, DeliveryAttemptRow[]>();
  for (const a of attempts) {
    const list = byPayment.get(a.paymentUuid) ?? [];
    list.push(a);
    byPayment.set(a.paymentUuid, list);
  }
  return rows.map((payment) => ({ payment, attempts: byPayment.get(payment.uuid) ?? [] }));
}

/** One statement, prepared once per database handle: a configuration with its payments of one ticker and their attempts. */
function logsStatement(db: Db) {
  return db
    .select({ config: paymentConfigs, payment: payments, attempt: deliveryAttempts, tip: chainCursors.height })
    .from(paymentConfigs)
    .leftJoin(payments, and(eq(payments.configId, paymentConfigs.id), eq(payments.ticker, sql.placeholder('ticker'))))
    .leftJoin(deliveryAttempts, eq(deliveryAttempts.paymentUuid, payments.uuid))
    .leftJoin(chainCursors, eq(chainCursors.network, payments.network))
    .where(eq(paymentConfigs.callbackUrl, sql.placeholder('callback')))
    .orderBy(asc(payments.createdAt), asc(payments.uuid), asc(deliveryAttempts.createdAt), asc(deliveryAttempts.id))
    .prepare('gateway_logs_of_callback');
}
const logsStatements = new WeakMap<Db, ReturnType<typeof logsStatement>>();

/**
 * The configuration of a callback URL with its payments of `ticker` (oldest first), each with its delivery
 * attempts in order: what GET /logs shows, in one round trip. undefined when no configuration has the URL.
 */
export async function configWithPayments(
  db: Db,
  callbackUrl: string,
  ticker: string,
): Promise<{ config: PaymentConfigRow; payments: Array<{ payment: PaymentRowForLogs; attempts: DeliveryAttemptRow[]; tip: bigint | null }> } | undefined> {
  let statement = logsStatements.get(db);
  if (!statement) logsStatements.set(db, (statement = logsStatement(db)));
  const rows = await statement.execute({ callback: callbackUrl, ticker });
  if (rows.length === 0) return undefined;
  const out: Array<{ payment: PaymentRowForLogs; attempts: DeliveryAttemptRow[]; tip: bigint | null }> = [];
  for (const { payment, attempt, tip } of rows) {
    if (!payment) continue;
    let last = out[out.length - 1];
    if (last?.payment.uuid !== payment.uuid) out.push((last = { payment, attempts: [], tip }));
    if (attempt) last.attempts.push(attempt);
  }
  return { config: rows[0].config, payments: out };
}

/** Records that the configuration takes deposits of `ticker` (idempotent). */
export async function acceptTicker(db: Db, configId: string, ticker: string): Promise<void> {
  await db.insert(configTickers).values({ configId, ticker }).onConflictDoNothing();
}
