import type { ForwardPlan } from './adapter';

/** A forward plan as stored (payments, sweeps): its bigint amounts as decimal strings. */
export const planToJson = (plan: ForwardPlan) => JSON.stringify(plan, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
export function planFromJson(raw: string): ForwardPlan {
  const p = JSON.parse(raw) as Record<string, unknown>;
  return {
    ...(p as unknown as ForwardPlan),
    forwarded: BigInt(p.forwarded as string),
    networkFee: BigInt(p.networkFee as string),
    sponsorCost: BigInt(p.sponsorCost as string),
    rent: BigInt(p.rent as string),
  };
}
