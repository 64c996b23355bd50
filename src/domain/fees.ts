import { convertUnits, percentOf } from './money';

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

/** A network cost paid in some coin (the deposit's own, or e.g. ETH gas for an ERC-20 forward). */
export interface NetworkCost {
  amount: bigint;
  /** true when paid in the deposit's own asset; otherwise priceInDeposit converts it. */
  sameAsset: boolean;
  decimals: number;
  /** Units of the deposit asset per unit of the cost's coin; required when !sameAsset. */
  priceInDeposit?: string;
}

export type FeeOutcome =
  | { eligible: true; feePercent: string; commission: bigint; networkCost: bigint; feeCoin: bigint; forwarded: bigint }
  | { eligible: false; reason: string };

export function computeFees(opts: { value: bigint; decimals: number; feePercent: string; costs: NetworkCost[] }): FeeOutcome {
  const commission = percentOf(opts.value, opts.feePercent);
  let networkCost = 0n;
  for (const c of opts.costs) {
    if (c.sameAsset) networkCost += c.amount;
    else if (c.priceInDeposit === undefined) return { eligible: false, reason: 'network cost cannot be priced in the deposit coin' };
    else networkCost += convertUnits(c.amount, c.decimals, opts.decimals, c.priceInDeposit);
  }
  const feeCoin = commission + networkCost;
  const forwarded = opts.value - feeCoin;
  if (forwarded <= 0n) return { eligible: false, reason: 'deposit does not cover fees and network costs' };
  return { eligible: true, feePercent: opts.feePercent, commission, networkCost, feeCoin, forwarded };
}
