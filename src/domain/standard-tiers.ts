import type { VolumeTier } from './fees';

/**
 * The standard global fee schedule (SPEC 4.8): the percentage a callback domain pays once its rolling
 * 30-day volume, valued in USDT, reaches a tier. Operator contracts per domain override it; an asset's
 * default fee_percent applies before the first tier is reached. Pure data, shared by the public read
 * (GET /api/pricing/standard) and the fee computation.
 */
export const PRICING_WINDOW_DAYS = 30;
export const PRICING_CURRENCY = 'USDT';

/** Ascending by fromUsdt; the first tier starts at 0. Percentages have two decimals. */
export const STANDARD_TIERS: readonly VolumeTier[] = Object.freeze([
  { fromUsdt: '0', feePercent: '1.00' },
  { fromUsdt: '10000', feePercent: '0.90' },
  { fromUsdt: '50000', feePercent: '0.80' },
  { fromUsdt: '250000', feePercent: '0.65' },
  { fromUsdt: '1000000', feePercent: '0.50' },
]);

export interface PublicTier {
  /** Inclusive lower bound of the rolling volume, USDT, two decimals. */
  from_volume_usdt: string;
  /** Exclusive upper bound, or null for the last tier. */
  to_volume_usdt: string | null;
  fee_percent: string;
}

const twoDecimals = (whole: string) => `${BigInt(whole).toString()}.00`;

/** The tiers as the public API prints them: decimal strings, explicit upper bounds. */
export function publicTiers(tiers: readonly VolumeTier[] = STANDARD_TIERS): PublicTier[] {
  return tiers.map((t, i) => ({
    from_volume_usdt: twoDecimals(t.fromUsdt),
    to_volume_usdt: i + 1 < tiers.length ? twoDecimals(tiers[i + 1].fromUsdt) : null,
    fee_percent: t.feePercent,
  }));
}
