import Decimal from 'decimal.js';
import { ASSETS, NETWORKS, type Asset } from './assets';
import { convertUnits } from './money';

/** Wide enough that the quotient is exact at 18 places before it is rounded up (decimal.js's default 20 digits is not). */
const Exact = Decimal.clone({ precision: 100 });

/**
 * A forward's network cost paid in the network's native coin (an ERC-20 forward's gas top-up, an SPL
 * forward's fee payer and rent) is recovered in the deposit's own asset. This is the one conversion:
 * the minimum refresh, the evaluation of a deposit and the forward's plan all price it here.
 */

/** The native coin of an asset's network (the asset itself for a native coin). */
export function nativeOf(asset: Asset): Asset {
  return ASSETS[NETWORKS[asset.network].nativeTicker];
}

/**
 * Units of `asset` per one unit of its network's native coin (e.g. USDT per ETH) from both USDT quotes,
 * rounded up (the cost is never understated); '1' for the native coin itself; undefined without a quote.
 */
export function nativePriceInAsset(asset: Asset, nativeUsdt: string | undefined, assetUsdt: string | undefined): string | undefined {
  if (nativeOf(asset).ticker === asset.ticker) return '1';
  if (!nativeUsdt || !assetUsdt) return undefined;
  return new Exact(nativeUsdt).div(assetUsdt).toFixed(18, Decimal.ROUND_UP);
}

/** `amount` base units of the native coin in base units of `asset` at `price` (nativePriceInAsset), rounded up. */
export function nativeCostInAsset(asset: Asset, amount: bigint, price: string): bigint {
  if (amount === 0n) return 0n;
  return convertUnits(amount, nativeOf(asset).decimals, asset.decimals, price);
}
