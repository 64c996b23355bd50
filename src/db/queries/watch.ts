import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { rowsOf } from '../prepared';
import { chainCursors, configTickers, paymentConfigs } from '../schema';

/** What the watchers read and write (src/detection/watcher.ts, first-start.ts): cursors and the configurations blocks pay. */

export type WatchedConfig = typeof paymentConfigs.$inferSelect;

/** Last block a watcher has fully scanned (the adapter's Cursor). */
interface StoredCursor {
  height: bigint;
  hash: string | null;
}

/** Postgres bind-parameter limit headroom; one block's recipients almost always fit one query. */
const MAX_PARAMS = 30_000;

export async function readCursor(db: Db, network: string): Promise<StoredCursor | null> {
  const rows = await db.select().from(chainCursors).where(eq(chainCursors.network, network));
  return rows.length ? { height: rows[0].height, hash: rows[0].blockHash } : null;
}

export async function writeCursor(db: Db, network: string, cursor: StoredCursor): Promise<void> {
  await db
    .insert(chainCursors)
    .values({ network, height: cursor.height, blockHash: cursor.hash })
    .onConflictDoUpdate({ target: chainCursors.network, set: { height: cursor.height, blockHash: cursor.hash, updatedAt: new Date() } });
}

/**
 * The configurations of the address family whose address_in is one of `recipients`, with each ticker they
 * were reused for (config_tickers; null when none): one indexed query on (family, address_in) per chunk.
 */
export async function configsPaid(db: Db, family: string, recipients: string[]): Promise<Array<{ config: WatchedConfig; accepted: string | null }>> {
  const rows: Array<{ config: WatchedConfig; accepted: string | null }> = [];
  for (let i = 0; i < recipients.length; i += MAX_PARAMS) {
    const chunk = recipients.slice(i, i + MAX_PARAMS);
    rows.push(
      ...(await db
        .select({ config: paymentConfigs, accepted: configTickers.ticker })
        .from(paymentConfigs)
        .leftJoin(configTickers, eq(configTickers.configId, paymentConfigs.id))
        .where(and(eq(paymentConfigs.family, family), inArray(paymentConfigs.addressIn, chunk)))),
    );
  }
  return rows;
}

/** Which of `addresses` are the address_in of a configuration of the family (sent as one text parameter). */
export async function addressesWatched(db: Db, family: string, addresses: string[]): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await db
    .selectDistinct({ address: paymentConfigs.addressIn })
    .from(paymentConfigs)
    .where(and(eq(paymentConfigs.family, family), sql`${paymentConfigs.addressIn} = ANY(string_to_array(${addresses.join(',')}, ','))`));
  return new Set(rows.map((r) => r.address));
}

/** Whether any configuration of the address family exists. */
export async function anyConfigOf(db: Db, family: string): Promise<boolean> {
  const rows = await db.select({ id: paymentConfigs.id }).from(paymentConfigs).where(eq(paymentConfigs.family, family)).limit(1);
  return rows.length > 0;
}

/** When the first configuration of the address family was made; undefined when none was. */
export async function firstConfigAt(db: Db, family: string): Promise<Date | undefined> {
  const [row] = rowsOf<{ at: Date | string | null }>(await db.execute(sql`SELECT min(created_at) AS at FROM payment_configs WHERE family = ${family}`));
  return row?.at === null || row?.at === undefined ? undefined : new Date(row.at);
}
