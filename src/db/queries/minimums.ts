import { sql, type SQL } from 'drizzle-orm';
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

/** A StateRow's columns, of asset_minimums as `m`. */
const COLUMNS = sql`m.ticker, m.value_base::text AS value_base, m.unavailable_reason, m.pinned_base::text AS pinned_base,
           floor(extract(epoch FROM (now() - m.computed_at)) * 1000)::bigint AS age_ms`;
const STATE_COLUMNS = sql`SELECT ${COLUMNS} FROM asset_minimums m`;

/** One ticker's state, as info shows it: prepared once per database handle. */
const stateOf = preparedStatement('gateway_minimum_state', sql`${STATE_COLUMNS} WHERE m.ticker = ${sql.placeholder('ticker')}`);

/** Every stored minimum state by ticker; the age is measured by the database clock (no host clock skew). */
export async function minimumStates(db: Db, ticker?: string): Promise<Map<string, MinimumState>> {
  const result = ticker === undefined ? await db.execute(STATE_COLUMNS) : await stateOf(db, { ticker });
  return new Map(rowsOf<StateRow>(result).map((r) => [r.ticker, toState(r)]));
}

/**
 * Writes one asset's row by `upsert` (an INSERT … ON CONFLICT that returns the row's stated figure, the pin
 * else the computed value) and, when that raised the stated figure, keeps the one it replaced honoured for
 * `honourMs` (supersededMinimums). One statement: the old figure is read under the row's lock.
 */
async function writeStated(db: Db, ticker: string, honourMs: number, upsert: SQL): Promise<void> {
  await db.execute(sql`
    WITH old AS (
      SELECT coalesce(pinned_base, value_base) AS stated FROM asset_minimums WHERE ticker = ${ticker} FOR UPDATE
    ), up AS (
      ${upsert} RETURNING coalesce(pinned_base, value_base) AS stated
    ), expired AS (
      DELETE FROM superseded_minimums WHERE honoured_until <= now()
    )
    INSERT INTO superseded_minimums (ticker, value_base, honoured_until)
    SELECT ${ticker}, old.stated, now() + ${honourMs}::double precision * interval '1 millisecond' FROM old, up
    WHERE old.stated < up.stated`);
}

/**
 * A refresh computed `value`: the current figure from now on. A lower figure it replaces stays honoured
 * for `honourMs` (one refresh interval).
 */
export async function recordComputed(db: Db, ticker: string, value: bigint, honourMs: number): Promise<void> {
  const v = value.toString();
  await writeStated(db, ticker, honourMs, sql`
      INSERT INTO asset_minimums (ticker, value_base, computed_at, attempted_at, unavailable_reason)
      VALUES (${ticker}, ${v}, now(), now(), NULL)
      ON CONFLICT (ticker) DO UPDATE SET value_base = ${v}, computed_at = now(), attempted_at = now(), unavailable_reason = NULL`);
}

/** A refresh could not compute a figure: the last one is kept (info may state it) but is no longer current. */
export async function recordUnavailable(db: Db, ticker: string, reason: string): Promise<void> {
  const r = reason.slice(0, 500);
  await db
    .insert(assetMinimums)
    .values({ ticker, attemptedAt: sql`now()`, unavailableReason: r })
    .onConflictDoUpdate({ target: assetMinimums.ticker, set: { attemptedAt: sql`now()`, unavailableReason: r } });
}

/**
 * The operator's pin (null clears it); the computed figures are left as they are. A lower figure it
 * replaces stays honoured for `honourMs`, as a refresh's does.
 */
export async function setPinned(db: Db, ticker: string, value: bigint | null, honourMs: number): Promise<void> {
  const v = value === null ? null : value.toString();
  await writeStated(db, ticker, honourMs, sql`
      INSERT INTO asset_minimums (ticker, pinned_base, pinned_at)
      VALUES (${ticker}, ${v}, ${v === null ? null : sql`now()`})
      ON CONFLICT (ticker) DO UPDATE SET pinned_base = EXCLUDED.pinned_base, pinned_at = EXCLUDED.pinned_at`);
}

export type DepositStateRow = StateRow & { honoured_base: string | null };

/**
 * One asset's state with the lowest superseded figure still honoured: what a deposit is held to
 * (depositMinimum), for the ticker `ticker` names (a value or a column of an outer query).
 */
export const depositStateSql = (ticker: SQL) =>
  sql`SELECT ${COLUMNS},
             (SELECT min(s.value_base) FROM superseded_minimums s
               WHERE s.ticker = m.ticker AND s.honoured_until > now())::text AS honoured_base
      FROM asset_minimums m WHERE m.ticker = ${ticker}`;

/** The state alone (depositMinimumState), prepared once per database handle; a deposit's first step reads it in first-step.ts. */
const depositStateOf = preparedStatement('gateway_deposit_minimum_state', depositStateSql(sql`${sql.placeholder('ticker')}`));

/** A depositStateSql row as the state it tells. */
export const toDepositState = (row: DepositStateRow): MinimumState => ({
  ...toState(row),
  honoured: row.honoured_base === null ? null : BigInt(row.honoured_base),
});

/** The state a deposit of `ticker` is held to; undefined while the asset has no row. */
export async function depositMinimumState(db: Db, ticker: string): Promise<MinimumState | undefined> {
  const [row] = rowsOf<DepositStateRow>(await depositStateOf(db, { ticker }));
  return row && toDepositState(row);
}
