import Decimal from 'decimal.js';
import type { Asset } from './assets';
import { parseUnits, percentOf } from './money';

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

/**
 * Smallest amount M whose forward the chain accepts under every fee percentage the gateway can apply:
 * M − networkFee − commission(p) ≥ payoutFloor for each p in `feePercents` (commission rounded down, as
 * percentOf takes it). The largest percentage decides, since M − commission(M, p) falls as p grows.
 */
export function minimumForPayout(o: { networkFee: bigint; payoutFloor: bigint; feePercents: readonly string[] }): bigint {
  if (o.networkFee < 0n || o.payoutFloor < 0n) throw new RangeError('negative forwarding cost or payout floor');
  const need = o.networkFee + o.payoutFloor;
  if (need === 0n) return 0n;
  const pmax = o.feePercents.reduce((m, p) => (new Decimal(p).gt(m) ? new Decimal(p) : m), new Decimal(0));
  if (pmax.gte(100)) throw new RangeError(`no amount pays a ${pmax.toString()} % commission and a forward`);
  const accepted = (m: bigint) => m - percentOf(m, pmax.toString()) >= need;
  // M × (1 − p/100) ≥ need, rounded up; the commission is rounded down, so a unit or two less may do too.
  let m = BigInt(new Decimal(need.toString()).mul(100).div(new Decimal(100).minus(pmax)).toFixed(0, Decimal.ROUND_UP));
  while (m > 0n && accepted(m - 1n)) m--;
  while (!accepted(m)) m++;
  return m;
}

/**
 * The published minimum: the registry floor, the forwarding cost within the operator's share of it
 * (minimumForCost), and an amount whose forward the chain accepts at every fee percentage (minimumForPayout).
 */
export function publishedMinimum(o: { networkFee: bigint; payoutFloor: bigint; feePercents: readonly string[]; maxCostPercent: string; floor: bigint }): bigint {
  const byCost = minimumForCost(o.networkFee, o.maxCostPercent, o.floor);
  const byPayout = minimumForPayout(o);
  return byPayout > byCost ? byPayout : byCost;
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
  /**
   * The lowest stated figure a higher one replaced within the last refresh interval (a customer may have
   * read it just before); read only where deposits are evaluated.
   */
  honoured?: bigint | null;
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

/** The registry floor of an asset, in its base units: no minimum is ever below it. */
export function minimumFloor(asset: Asset): bigint {
  return parseUnits(asset.minimumFloor, asset.decimals);
}

/**
 * The minimum an observed deposit is held to (SPEC 8: each observed payment is evaluated against the
 * current economics): the figure GET /api/{ticker}/info states when the deposit is evaluated, i.e. the
 * operator's pin, else the last figure of the `minimum-refresh` schedule, else the registry floor; or a
 * lower figure stated before it that is still honoured (replaced within the last refresh interval), so a
 * customer who paid what the catalog showed a moment ago is not refused because a refresh raised it. The
 * configuration's creation-time snapshot (minimum_transaction_coin) is informational and not applied.
 */
export function depositMinimum(state: MinimumState | undefined, asset: Asset): bigint {
  const floor = minimumFloor(asset);
  const stated = statedMinimum(state, floor);
  const honoured = state?.honoured;
  return honoured != null && honoured < stated ? atLeast(honoured, floor) : stated;
}

/** The minimum the API shows, from the stored state and the refresh interval. */
export function viewMinimum(state: MinimumState | undefined, floor: bigint, refreshMs: number): MinimumView {
  const stated = statedMinimum(state, floor);
  if (state?.pinned != null) return { current: stated, stated };
  const fresh = state?.value != null && state.ageMs != null && state.ageMs <= STALE_AFTER_REFRESHES * refreshMs && state.unavailable == null;
  return { current: fresh ? stated : null, stated };
}
