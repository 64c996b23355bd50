import { sql } from 'drizzle-orm';
import type { Db } from '../client';
import { preparedStatement, rowsOf } from '../prepared';
import { assetMinimums } from '../schema';
import type { MinimumState } from '../../domain/minimum';

interface StateRow {
  ticker: string;
  value_base: string | null;
  age_ms: string | number | null;
  unavailable_reason: string | null;
  pinned_base: string | null;
}

const toState = (r: StateRow): MinimumState => ({
  value: r.value_base === null ? null : BigInt(r.value_base),
  ageMs: r.age_ms === null ? null : Number(r.age_ms),
  unavailable: r.unavailable_reason,
  pinned: r.pinned_base === null ? null : BigInt(r.pinned_base),
});

const STATE_COLUMNS = sql`
    SELECT ticker, value_base::text AS value_base, unavailable_reason, pinned_base::text AS pinned_base,
           floor(extract(epoch FROM (now() - computed_at)) * 1000)::bigint AS age_ms
    FROM asset_minimums`;

/** One ticker's state: every deposit's evaluation reads it, so it is prepared once per database handle. */
const stateOf = preparedStatement('gateway_minimum_state', sql`${STATE_COLUMNS} WHERE ticker = ${sql.placeholder('ticker')}`);

/** Every stored minimum state by ticker; the age is measured by the database clock (no host clock skew). */
export async function minimumStates(db: Db, ticker?: string): Promise<Map<string, MinimumState>> {
  const result = ticker === undefined ? await db.execute(STATE_COLUMNS) : await stateOf(db, { ticker });
  return new Map(rowsOf<StateRow>(result).map((r) => [r.ticker, toState(r)]));
}

/** A refresh computed `value`: the current figure from now on. */
export async function recordComputed(db: Db, ticker: string, value: bigint): Promise<void> {
  await db
    .insert(assetMinimums)
    .values({ ticker, valueBase: value.toString(), computedAt: sql`now()`, attemptedAt: sql`now()`, unavailableReason: null })
    .onConflictDoUpdate({
      target: assetMinimums.ticker,
      set: { valueBase: value.toString(), computedAt: sql`now()`, attemptedAt: sql`now()`, unavailableReason: null },
    });
}

/** A refresh could not compute a figure: the last one is kept (info may state it) but is no longer current. */
export async function recordUnavailable(db: Db, ticker: string, reason: string): Promise<void> {
  const r = reason.slice(0, 500);
  await db
    .insert(assetMinimums)
    .values({ ticker, attemptedAt: sql`now()`, unavailableReason: r })
    .onConflictDoUpdate({ target: assetMinimums.ticker, set: { attemptedAt: sql`now()`, unavailableReason: r } });
}

/** The operator's pin (null clears it); the computed figures are left as they are. */
export async function setPinned(db: Db, ticker: string, value: bigint | null): Promise<void> {
  const pinnedBase = value === null ? null : value.toString();
  const pinnedAt = value === null ? null : sql`now()`;
  await db
    .insert(assetMinimums)
    .values({ ticker, pinnedBase, pinnedAt })
    .onConflictDoUpdate({ target: assetMinimums.ticker, set: { pinnedBase, pinnedAt } });
}
