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

/**
 * The address_in of the family's configurations created at or after `since` (all of them without), and the
 * database's now() for the statement: one indexed range on (family, created_at), the addresses as one string
 * (an address holds no comma), so a full load of many configurations makes no object per row.
 */
export async function addressesCreatedSince(db: Db, family: string, since: Date | null): Promise<{ at: Date; addresses: string[] }> {
  const after = since === null ? sql`` : sql` AND created_at >= ${since.toISOString()}::timestamptz`;
  const [row] = rowsOf<{ at: Date | string; addresses: string | null }>(
    await db.execute(sql`SELECT now() AS at, string_agg(address_in, ',') AS addresses FROM payment_configs WHERE family = ${family}${after}`),
  );
  return { at: new Date(row.at), addresses: row.addresses ? row.addresses.split(',') : [] };
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
