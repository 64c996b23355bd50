import Decimal from 'decimal.js';
import { forwardedValueOfHost, type HostValue } from '../src/db/queries/host-volume';
import type { ConfigRow } from '../src/db/queries/payments';
import { ASSETS, type Asset } from '../src/domain/assets';
import { nativeOf, nativePriceInAsset } from '../src/domain/network-cost';
import { callbackHost } from '../src/domain/callback-host';
import { chooseFeePercent, type FeePolicy } from '../src/domain/fees';
import type { Db } from '../src/db/client';
import type { PriceSource } from '../src/prices/source';

const THIRTY_DAYS_MS = 30 * 24 * 3600 * 1000;
/** Sums of value × price reach well past decimal.js's default 20 significant digits: exact to 100. */
const Exact = Decimal.clone({ precision: 100 });

/** Rolling 30-day USDT volume of a callback host: forwarded payments with a captured price (summed by PostgreSQL). */
export async function rollingVolumeUsdt(db: Db, host: string, now = new Date()): Promise<string> {
  return volumeUsdt(await forwardedValueOfHost(db, host, volumeSince(now)));
}

/** Where the rolling 30-day window starts. */
export const volumeSince = (now = new Date()) => new Date(now.getTime() - THIRTY_DAYS_MS);

/** The USDT value of a host's forwarded sums (forwardedValueOfHost), rounded down to cents. */
export function volumeUsdt(sums: readonly HostValue[]): string {
  let total = new Exact(0);
  for (const { ticker, valueTimesPrice } of sums) {
    if (!ASSETS[ticker]) continue;
    total = total.plus(new Exact(valueTimesPrice).div(new Exact(10).pow(ASSETS[ticker].decimals)));
  }
  return total.toFixed(2, Decimal.ROUND_DOWN);
}

/** The percentage for a payment: domain override, else the host's volume tier, else the asset default. */
export function feePercentOf(policy: FeePolicy, config: ConfigRow, asset: Asset, rollingVolume: string): string {
  return chooseFeePercent({ policy, callbackHost: callbackHost(config.callbackUrl), rollingVolumeUsdt: rollingVolume, assetDefault: asset.feePercent });
}

/** Units of `asset` per one unit of its network's native coin (e.g. USDT per ETH), from USDT quotes. */
export async function priceOfNativeInAsset(prices: PriceSource, asset: Asset): Promise<string | undefined> {
  const native = nativeOf(asset);
  if (native.ticker === asset.ticker) return nativePriceInAsset(asset, undefined, undefined);
  const [n, a] = await Promise.all([prices.usdt(native.symbol), prices.usdt(asset.symbol)]);
  return nativePriceInAsset(asset, n ?? undefined, a ?? undefined);
}
