import { eq, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { oncePerDb } from '../prepared';
import { paymentConfigs, payments } from '../schema';
import type { MinimumState } from '../../domain/minimum';
import { forwardedValueSql, toHostValue, type HostValue } from './host-volume';
import { depositStateSql, toDepositState, type DepositStateRow } from './minimums';
import type { ConfigRow, PaymentRow } from './payments';

/** What a deposit's first step reads: its row, its configuration, the minimum it is held to, its host's volume. */
export interface DepositReading {
  payment: PaymentRow;
  config: ConfigRow;
  /** depositMinimumState of its ticker: undefined while the asset has no row. */
  minimum: MinimumState | undefined;
  /** forwardedValueOfHost of its configuration's callback host since `since`. */
  volume: HostValue[];
}

/**
 * The first step's reads in one statement, its one round trip before the fee percent is stored: the payment
 * (by its deposit key, as the watcher's batch wrote it) with its configuration, and in subqueries over that
 * row the minimum state of its ticker and the forwarded value of its callback host (the fragments of
 * depositMinimumState and forwardedValueOfHost). On a worker short of CPU each round trip waits its turn
 * on the event loop, so the first steps of a burst cost their deposits that many turns.
 */
const readingOf = oncePerDb((db) =>
  db
    .select({
      payment: payments,
      config: paymentConfigs,
      minimum: sql<DepositStateRow | null>`(SELECT row_to_json(s) FROM (${depositStateSql(sql`${payments.ticker}`)}) s)`,
      volume: sql<Array<{ ticker: string; value_times_price: string }>>`(SELECT coalesce(json_agg(v), '[]'::json) FROM (${forwardedValueSql(
        sql`${paymentConfigs.callbackHost}`,
        sql`${sql.placeholder('since')}::timestamptz`,
      )}) v)`,
    })
    .from(payments)
    .innerJoin(paymentConfigs, eq(payments.configId, paymentConfigs.id))
    .where(eq(payments.depositKey, sql.placeholder('depositKey')))
    .prepare('gateway_read_deposit'),
);

/** The deposit's first reading; undefined when no row has its deposit key yet. */
export async function readDeposit(db: Db, depositKey: string, since: Date): Promise<DepositReading | undefined> {
  const [row] = await readingOf(db).execute({ depositKey, since: since.toISOString() });
  if (!row) return undefined;
  return {
    payment: row.payment,
    config: row.config,
    minimum: row.minimum ? toDepositState(row.minimum) : undefined,
    volume: row.volume.map(toHostValue),
  };
}
