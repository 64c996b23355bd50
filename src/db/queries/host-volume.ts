import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client';
import { $, preparedStatement, rowsOf } from '../prepared';

/** A price that is not a plain decimal counts as none (the callbacks omit it too: isValidPrice). */
const PLAIN_DECIMAL = sql.raw(`'^[0-9]+([.][0-9]+)?$'`);

/**
 * The host's hours after the one `since` falls in, from host_volume_hours (kept by a trigger on payments:
 * drizzle/0000_init.sql), and that first, partial hour from the payments themselves: the
 * host's payments created since `since` in it (payments_created_at_idx). Both count what the trigger
 * counts: sent or done, with a plain decimal price.
 */
export const forwardedValueSql = (host: SQL, since: SQL) => sql`
    SELECT ticker, sum(v)::text AS value_times_price FROM (
      SELECT ticker, value_times_price AS v FROM host_volume_hours
      WHERE host = ${host} AND hour > date_trunc('hour', ${since}, 'UTC')
      UNION ALL
      SELECT p.ticker, p.value_base * (CASE WHEN p.price ~ ${PLAIN_DECIMAL} THEN p.price::numeric END)
      FROM payments p JOIN payment_configs c ON c.id = p.config_id
      WHERE p.created_at >= ${since}
        AND p.created_at < date_trunc('hour', ${since}, 'UTC') + interval '1 hour'
        AND p.result IN ('sent', 'done') AND p.price IS NOT NULL
        AND c.callback_host = ${host}
    ) AS counted
    WHERE v IS NOT NULL
    GROUP BY ticker`;

const forwardedValue = preparedStatement('gateway_forwarded_value_of_host', forwardedValueSql(sql`${$('host')}::text`, sql`${$('since')}::timestamptz`));

export interface HostValue {
  ticker: string;
  valueTimesPrice: string;
}

/** A forwardedValueSql row as the sum it tells. */
export const toHostValue = (r: { ticker: string; value_times_price: string }): HostValue => ({ ticker: r.ticker, valueTimesPrice: r.value_times_price });

/** How far back host_volume_hours keeps a host's hours (drizzle/0000_init.sql: older ones go when the host opens a new hour). */
const KEPT_MS = 31 * 24 * 3600_000;

/**
 * Per ticker, the sum of value_base × price of the callback host's payments forwarded (sent or done) and
 * created since `since` (at most 31 days back), exact (numeric). It reads at most one row per hour and ticker of the window, and
 * the payments of its first hour: a forward's fee tier costs about the same at any merchant volume.
 */
export async function forwardedValueOfHost(db: Db, host: string, since: Date): Promise<HostValue[]> {
  assertKept(since);
  return rowsOf<{ ticker: string; value_times_price: string }>(await forwardedValue(db, { host: host.toLowerCase(), since: since.toISOString() })).map(toHostValue);
}

/** A host's hours older than 31 days are dropped: a longer window would be summed short. */
function assertKept(since: Date): void {
  if (since.getTime() < Date.now() - KEPT_MS) throw new RangeError(`the volume is kept for 31 days; no window from ${since.toISOString()}`);
}
