import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { chainCursors, payments } from '../schema';

/**
 * A network's chain was replaced by a new one (a local chain started without its state, devnet/reset.ts):
 * its payments still pending or processing are marked failed with `reason`, and its watcher's cursor is
 * dropped. Returns how many payments were failed.
 */
export async function settleReplacedChain(db: Db, network: string, reason: string): Promise<number> {
  const failed = await db
    .update(payments)
    .set({ result: 'failed', reason, lastUpdate: sql`now()` })
    .where(and(eq(payments.network, network), inArray(payments.result, ['pending', 'processing'])))
    .returning({ uuid: payments.uuid });
  await db.delete(chainCursors).where(eq(chainCursors.network, network));
  return failed.length;
}
