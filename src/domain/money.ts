import Decimal from 'decimal.js';

/**
 * Money is bigint base units of a named asset. decimal.js is used only here, to parse and print at the
 * edges; every amount the spec shows goes through formatUnits with the asset's precision.
 */
const D = Decimal.clone({ precision: 200, rounding: Decimal.ROUND_DOWN, toExpNeg: -1000, toExpPos: 1000 });

/**
 * 123456789n, 8 → "1.23456789"; always exactly `decimals` fractional digits. The digits of the integer are
 * only split at the point, so no arithmetic is needed (decimal.js took a tenth of a create's own work here).
 */
export function formatUnits(amount: bigint, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0) throw new RangeError(`not a number of decimals: ${decimals}`);
  const digits = (amount < 0n ? -amount : amount).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  return `${amount < 0n ? '-' : ''}${whole}${decimals > 0 ? `.${digits.slice(digits.length - decimals)}` : ''}`;
}

/** "1.5", 8 → 150000000n. More fractional digits than the asset has is an error, never a silent rounding. */
export function parseUnits(text: string, decimals: number): bigint {
  if (!/^\d+(\.\d+)?$/.test(text)) throw new RangeError(`not a non-negative decimal: ${JSON.stringify(text)}`);
  const frac = text.split('.')[1] ?? '';
  if (frac.replace(/0+$/, '').length > decimals) throw new RangeError(`more than ${decimals} decimal places: ${text}`);
  return BigInt(new D(text).mul(new D(10).pow(decimals)).toFixed(0));
}

/** A decimal string (price, percentage) printed with exactly `places` fractional digits, rounding down. */
export function formatDecimal(text: string, places: number): string {
  return new D(text).toFixed(places, Decimal.ROUND_DOWN);
}

/** amount × percent / 100, rounded down to whole base units (the merchant is never charged a fraction up). */
export function percentOf(amount: bigint, percent: string): bigint {
  return BigInt(new D(amount.toString()).mul(new D(percent)).div(100).toFixed(0, Decimal.ROUND_DOWN));
}

/** Converts base units of one asset into base units of another at `price` (units of `to` per unit of `from`), rounding up. */
export function convertUnits(amount: bigint, fromDecimals: number, toDecimals: number, price: string): bigint {
  const value = new D(amount.toString()).div(new D(10).pow(fromDecimals)).mul(new D(price)).mul(new D(10).pow(toDecimals));
  return BigInt(value.toFixed(0, Decimal.ROUND_UP));
}
