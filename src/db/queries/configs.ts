import { asc, eq, and, sql } from 'drizzle-orm';
import { callbackWireKey } from '../../callbacks/transport';
import { callbackHost } from '../../domain/callback-host';
import type { Db, Tx } from '../client';
import { oncePerDb } from '../prepared';
import { chainCursors, configTickers, deliveryAttempts, paymentConfigs, payments } from '../schema';
import { takeIndexes } from './derivation';

export type PaymentConfigRow = typeof paymentConfigs.$inferSelect;

/** The columns GET /logs shows (SPEC 2.3-2.5), and no others: the statement reads ten rows of them per request. */
const LOGS_CONFIG = {
  id: paymentConfigs.id,
  addressIn: paymentConfigs.addressIn,
  addressOut: paymentConfigs.addressOut,
  callbackUrl: paymentConfigs.callbackUrl,
  family: paymentConfigs.family,
  notifyConfirmations: paymentConfigs.notifyConfirmations,
  notifyPending: paymentConfigs.notifyPending,
  priority: paymentConfigs.priority,
};
const LOGS_PAYMENT = {
  uuid: payments.uuid,
  txidIn: payments.txidIn,
  vout: payments.vout,
  txidOut: payments.txidOut,
  valueBase: payments.valueBase,
  forwardedBase: payments.forwardedBase,
  confirmations: payments.confirmations,
  blockNumber: payments.blockNumber,
  lastUpdate: payments.lastUpdate,
  result: payments.result,
  feePercent: payments.feePercent,
  feeBase: payments.feeBase,
  price: payments.price,
};
const LOGS_ATTEMPT = {
  requestUrl: deliveryAttempts.requestUrl,
  responseBody: deliveryAttempts.responseBody,
  responseStatus: deliveryAttempts.responseStatus,
  nextTry: deliveryAttempts.nextTry,
  pending: deliveryAttempts.pending,
  confirmed: deliveryAttempts.confirmed,
};
/** A row of the logs statement, as drizzle types it. */
type LogsRow = Awaited<ReturnType<ReturnType<typeof logsStatement>['execute']>>[number];
export type LogsConfigRow = LogsRow['config'];
export type PaymentRowForLogs = NonNullable<LogsRow['payment']>;
export type DeliveryAttemptRow = NonNullable<LogsRow['attempt']>;

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

class AlreadyExists extends Error {}

/**
 * The configuration of a callback URL, created once. A new one takes the next derivation index of its
 * address family (its sequence) and its address_in from `deriveAddressIn(index)`, in one transaction: the
 * unique callback_url index makes every create but the first find the existing row (a loser's index is
 * skipped).
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
        [index] = await takeIndexes(tx, input.family, 1);
        addressIn = deriveAddressIn(index);
      } else {
        // A pre-derived address (no public derivation): taken in this transaction, given back on rollback.
        ({ index, address: addressIn } = await deriveAddressIn.allocate(tx));
      }
      const [row] = await tx
        .insert(paymentConfigs)
        .values({
          callbackUrl: input.callbackUrl,
          callbackKey: callbackWireKey(input.callbackUrl),
          callbackHost: callbackHost(input.callbackUrl),
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
        .onConflictDoNothing()
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

/** One statement, prepared once per database handle: a configuration with its payments of one ticker and their attempts. */
function logsStatement(db: Db) {
  return db
    .select({ config: LOGS_CONFIG, payment: LOGS_PAYMENT, attempt: LOGS_ATTEMPT, tip: chainCursors.height })
    .from(paymentConfigs)
    .leftJoin(payments, and(eq(payments.configId, paymentConfigs.id), eq(payments.ticker, sql.placeholder('ticker'))))
    .leftJoin(deliveryAttempts, eq(deliveryAttempts.paymentUuid, payments.uuid))
    .leftJoin(chainCursors, eq(chainCursors.network, payments.network))
    .where(eq(paymentConfigs.callbackUrl, sql.placeholder('callback')))
    .orderBy(asc(payments.createdAt), asc(payments.uuid), asc(deliveryAttempts.createdAt), asc(deliveryAttempts.id))
    .prepare('gateway_logs_of_callback');
}
const logsStatementOf = oncePerDb(logsStatement);

/**
 * The configuration of a callback URL with its payments of `ticker` (oldest first), each with its delivery
 * attempts in order: what GET /logs shows, in one round trip. undefined when no configuration has the URL.
 */
export async function configWithPayments(
  db: Db,
  callbackUrl: string,
  ticker: string,
): Promise<{ config: LogsConfigRow; payments: Array<{ payment: PaymentRowForLogs; attempts: DeliveryAttemptRow[]; tip: bigint | null }> } | undefined> {
  const rows = await logsStatementOf(db).execute({ callback: callbackUrl, ticker });
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
