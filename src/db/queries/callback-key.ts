import { sql } from 'drizzle-orm';
import { callbackWireKey } from '../../callbacks/transport';
import type { Db } from '../client';
import { rowsOf } from '../prepared';

/**
 * Keys the configurations stored before payment_configs.callback_key existed (drizzle/0014), oldest first:
 * the key is computed by the code that sends the callbacks, which SQL cannot repeat. A row whose key an
 * older row already holds (an alias made before the rule) keeps none: it is still found by its exact URL,
 * and no new alias can join it. Run after the migrations, under their lock; a no-op once every row is keyed.
 */
export async function backfillCallbackKeys(db: Db): Promise<number> {
  const rows = rowsOf<{ id: string; callback_url: string }>(
    await db.execute(sql`SELECT id, callback_url FROM payment_configs WHERE callback_key IS NULL ORDER BY created_at, id`),
  );
  let keyed = 0;
  for (const row of rows) {
    let key: string;
    try {
      key = callbackWireKey(row.callback_url);
    } catch {
      continue;
    }
    const updated = await db.execute(
      sql`UPDATE payment_configs SET callback_key = ${key}
          WHERE id = ${row.id} AND NOT EXISTS (SELECT 1 FROM payment_configs WHERE callback_key = ${key})
          RETURNING id`,
    );
    keyed += rowsOf(updated).length;
  }
  return keyed;
}
