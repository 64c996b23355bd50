/**
 * The processing minimum (SPEC 2.1, 2.2, 8): the smallest deposit whose forwarding cost stays within the
 * operator's share of it, never below the registry floor. Pure: the figures come from
 * activities/minimums.ts, the state from the asset_minimums table.
 */

/** A computed figure older than this many refresh intervals is no longer current (the catalog prints null). */
export const STALE_AFTER_REFRESHES = 3;

/** "5.00" → 500n hundredths of a percent; the input has at most two decimals (src/config.ts checks it). */
function hundredthsOfPercent(percent: string): bigint {
  const [whole, frac = ''] = percent.split('.');
  const v = BigInt(whole) * 100n + BigInt(frac.padEnd(2, '0').slice(0, 2));
  if (v <= 0n) throw new RangeError(`not a positive percentage: ${percent}`);
  return v;
}

/**
 * Smallest amount M with cost ≤ maxCostPercent % of M, i.e. ⌈cost × 100 / pct⌉, in base units of the
 * deposit's asset; the floor when that is lower.
 */
export function minimumForCost(cost: bigint, maxCostPercent: string, floor: bigint): bigint {
  if (cost < 0n) throw new RangeError('negative forwarding cost');
  const h = hundredthsOfPercent(maxCostPercent);
  const m = (cost * 10_000n + h - 1n) / h;
  return m > floor ? m : floor;
}

/** One asset's stored minimum state (asset_minimums row), amounts as base-unit bigints. */
export interface MinimumState {
  /** Last figure the refresh computed (never below the floor when written). */
  value: bigint | null;
  /** Milliseconds since `value` was computed, by the database clock. */
  ageMs: number | null;
  /** Why the latest refresh could not compute a figure; null when it did. */
  unavailable: string | null;
  /** Operator's pinned minimum: shown as is, never stale. */
  pinned: bigint | null;
}

export interface MinimumView {
  /** The current minimum, or null while it is unavailable (no figure yet, stale, or not computable now). */
  current: bigint | null;
  /** What a field that must be a decimal string states: the current figure, else the last one, else the floor. */
  stated: bigint;
}

const atLeast = (v: bigint, floor: bigint) => (v > floor ? v : floor);

/**
 * The minimum where a decimal string is required (info, create's snapshot) and the one a deposit is held to
 * when evaluated: the pin, else the last computed figure (current or not), else the registry floor.
 */
export function statedMinimum(state: MinimumState | undefined, floor: bigint): bigint {
  const v = state?.pinned ?? state?.value;
  return v != null ? atLeast(v, floor) : floor;
}

/** The minimum the API shows, from the stored state and the refresh interval. */
export function viewMinimum(state: MinimumState | undefined, floor: bigint, refreshMs: number): MinimumView {
  const stated = statedMinimum(state, floor);
  if (state?.pinned != null) return { current: stated, stated };
  const fresh = state?.value != null && state.ageMs != null && state.ageMs <= STALE_AFTER_REFRESHES * refreshMs && state.unavailable == null;
  return { current: fresh ? stated : null, stated };
}
