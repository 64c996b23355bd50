import type { Asset } from './assets';
import { percentOf } from './money';
import { nativeCostInAsset } from './network-cost';

/**
 * Fee computation (SPEC 2.6 fee/fee_coin, issue 6 §4). All amounts are bigint base units of the deposit's
 * asset unless named otherwise. value_coin = value_forwarded_coin + fee_coin holds exactly by construction.
 */
export interface VolumeTier {
  /** Lower bound of the rolling 30-day USDT volume of the callback domain, inclusive, decimal string. */
  fromUsdt: string;
  feePercent: string;
}

export interface FeePolicy {
  /** Contracted percentage per callback domain (operator override). */
  domainOverrides: Record<string, string>;
  /** Public standard tiers, ascending by fromUsdt. */
  tiers: VolumeTier[];
}

/** Override for the domain, else the volume tier it reached, else the asset default. */
export function chooseFeePercent(opts: {
  policy: FeePolicy;
  callbackHost: string;
  rollingVolumeUsdt: string | undefined;
  assetDefault: string;
}): string {
  const override = opts.policy.domainOverrides[opts.callbackHost.toLowerCase()];
  if (override !== undefined) return override;
  if (opts.rollingVolumeUsdt !== undefined) {
    const volume = BigInt(opts.rollingVolumeUsdt.split('.')[0]);
    let chosen: string | undefined;
    for (const t of opts.policy.tiers) if (volume >= BigInt(t.fromUsdt.split('.')[0])) chosen = t.feePercent;
    if (chosen !== undefined) return chosen;
  }
  return opts.assetDefault;
}

/**
 * A network cost in base units of the coin it is paid in: the deposit's own asset, or the network's
 * native coin (e.g. ETH gas for an ERC-20 forward), converted at `priceInAsset` (nativePriceInAsset).
 */
export type NetworkCost = { amount: bigint; paidIn: 'asset' } | { amount: bigint; paidIn: 'native'; priceInAsset: string | undefined };

export type FeeOutcome =
  | { eligible: true; feePercent: string; commission: bigint; networkCost: bigint; feeCoin: bigint; forwarded: bigint }
  | { eligible: false; reason: string };

export function computeFees(opts: { value: bigint; asset: Asset; feePercent: string; costs: NetworkCost[] }): FeeOutcome {
  const commission = percentOf(opts.value, opts.feePercent);
  let networkCost = 0n;
  for (const c of opts.costs) {
    if (c.paidIn === 'asset') networkCost += c.amount;
    else if (c.priceInAsset === undefined) return { eligible: false, reason: 'network cost cannot be priced in the deposit coin' };
    else networkCost += nativeCostInAsset(opts.asset, c.amount, c.priceInAsset);
  }
  const feeCoin = commission + networkCost;
  const forwarded = opts.value - feeCoin;
  if (forwarded <= 0n) return { eligible: false, reason: 'deposit does not cover fees and network costs' };
  return { eligible: true, feePercent: opts.feePercent, commission, networkCost, feeCoin, forwarded };
}
