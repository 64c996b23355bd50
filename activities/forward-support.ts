import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  InsufficientAmountError,
  InvalidRequestError,
  UnsupportedOperationError,
  type ForwardPlan,
} from '../src/chains/adapter';

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

/** Permanent chain errors end the attempt for good; everything else is retried by Temporal. */
export function permanent(e: unknown): never {
  if (e instanceof InsufficientAmountError || e instanceof UnsupportedOperationError || e instanceof InvalidRequestError) {
    throw ApplicationFailure.nonRetryable(e.message, e.name);
  }
  throw e;
}

/** Heartbeats every 5 s while fn runs (inside an activity), so a dead worker is noticed quickly. */
export async function withHeartbeat<T>(fn: () => Promise<T>): Promise<T> {
  let ctx: Context | undefined;
  try {
    ctx = Context.current();
  } catch {
    return fn();
  }
  ctx.heartbeat();
  const timer = setInterval(() => ctx!.heartbeat(), 5000);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

