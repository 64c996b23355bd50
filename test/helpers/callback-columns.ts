import { sql, type SQL } from 'drizzle-orm';
import { callbackWireKey } from '../../src/callbacks/transport';
import { callbackHost } from '../../src/domain/callback-host';

/**
 * The callback columns of a payment_configs row as a create stores them (src/db/queries/create-config.ts):
 * the URL, its callbacks' wire key (one configuration per key, DESIGN 15) and its host (what the fee tier's
 * volume counts by). Both are NOT NULL: a row a test or bench inserts directly spreads these.
 */
export function callbackColumns(callbackUrl: string): { callbackUrl: string; callbackKey: string; callbackHost: string } {
  return { callbackUrl, callbackKey: callbackWireKey(callbackUrl), callbackHost: callbackHost(callbackUrl) };
}

/** The same three values in SQL, as `callback_url, callback_key, callback_host` of an INSERT's row. */
export function callbackValues(callbackUrl: string): SQL {
  const c = callbackColumns(callbackUrl);
  return sql`${c.callbackUrl}, ${c.callbackKey}, ${c.callbackHost}`;
}

/**
 * callbackValues of rows made in SQL (generate_series): each row's URL is `base` with `suffix` (an integer)
 * appended to its path, which appends the same to its key.
 */
export function callbackValuesSeries(base: string, suffix: SQL): SQL {
  const { callbackKey, callbackHost: host } = callbackColumns(base);
  if (callbackWireKey(`${base}7`) !== `${callbackKey}7`) throw new Error(`${base}: a suffix of its URL is not one of its key`);
  return sql`${base}::text || ${suffix}, ${callbackKey}::text || ${suffix}, ${host}::text`;
}
