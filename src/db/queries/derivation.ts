import { sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { Db, Tx } from '../client';
import { $, preparedStatement, rowsOf } from '../prepared';

/**
 * Each address family's HD derivation indexes come from a PostgreSQL sequence of its own
 * (`derivation_index_<family>`, drizzle/0000_init.sql), shared by every process: creates of
 * derived addresses, the worker's Solana pool. A sequence hands each index out once and is never rolled
 * back, so concurrent creates never wait on each other's commit; an index taken by a create that then
 * rolled back is skipped (a gap, never a second owner of one address).
 */

/** `nextval` of a family's sequence; the family a bound value or a statement's placeholder. */
export function nextIndexSql(family: string | Placeholder): SQL {
  return sql`nextval(('derivation_index_' || ${family}::text)::regclass)`;
}

/** The next index the family's sequence will hand out, without taking it: 0 for a family with no sequence. */
export async function peekNextIndex(db: Db, family: string): Promise<bigint> {
  const result = await db.execute(sql`
    SELECT coalesce(last_value + 1, start_value) AS next FROM pg_sequences
    WHERE schemaname = current_schema() AND sequencename = ${`derivation_index_${family}`}`);
  const [row] = rowsOf<{ next: string | number | bigint }>(result);
  return row ? BigInt(String(row.next)) : 0n;
}

/** `n` indexes of the family, each handed out once (in order, though not necessarily adjacent). */
export async function takeIndexes(tx: Db | Tx, family: string, n: number): Promise<bigint[]> {
  const result = await tx.execute(sql`SELECT ${nextIndexSql(family)} AS i FROM generate_series(1, ${n}::integer) ORDER BY 1`);
  return rowsOf<{ i: string | number | bigint }>(result).map((r) => BigInt(String(r.i)));
}

const storeRun = preparedStatement(
  'gateway_store_derived_run',
  sql`INSERT INTO derived_addresses (source, derivation_index, address)
      SELECT ${$('source')}::text, ${$('start')}::bigint + t.k - 1, t.address
      FROM unnest(string_to_array(${$('addresses')}::text, ',')) WITH ORDINALITY AS t(address, k)
      ON CONFLICT DO NOTHING`,
);

/**
 * Stores the addresses of indexes start, start+1, … of a derived source (rows already there are kept). One
 * prepared statement of three values, where drizzle's insert built and bound three values per row: a run of
 * 256 was a few milliseconds of the API's thread. Addresses (hex, base58, bech32, cashaddr) hold no comma.
 */
export async function storeDerivedRun(db: Db, source: string, start: bigint, addresses: readonly string[]): Promise<void> {
  if (addresses.length === 0) return;
  if (addresses.some((a) => a.length === 0 || a.includes(','))) throw new Error('a derived address is empty or holds a comma');
  await storeRun(db, { source, start: start.toString(), addresses: addresses.join(',') });
}

/** The highest index of `source` already stored in derived_addresses, or -1n when none is. */
export async function lastStoredIndex(db: Db, source: string): Promise<bigint> {
  const [row] = rowsOf<{ stored: unknown }>(await db.execute(sql`SELECT max(derivation_index) AS stored FROM derived_addresses WHERE source = ${source}`));
  return row.stored === null ? -1n : BigInt(String(row.stored));
}
