import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  InsufficientAmountError,
  InvalidRequestError,
  UnsupportedOperationError,
  type ObservedDeposit,
} from '../src/chains/adapter';
import type { ConfigRow, PaymentRow } from '../src/db/queries/payments';
import { ASSETS, type Asset } from '../src/domain/assets';
import { depositIndex } from '../src/domain/deposit-key';

export { planFromJson, planToJson } from '../src/chains/plan-json';

/**
 * Typed chain errors (the deposit does not cover the cost now, a request or operation the chain refuses)
 * end the attempt at once, typed by their name, rather than being retried inside the activity: the payment
 * workflow waits on them with its own backoff and tries again (only a txid collision is final there).
 * Everything else is retried a few times by Temporal first.
 */
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
  // A local activity has no heartbeat: the worker keeps its workflow task alive instead.
  if (ctx.info.isLocal) return fn();
  // None at the start: the heartbeat timeout counts from the start until the first one, and a step that ends
  // within 5 s (nearly every forward) then costs the server no heartbeat at all.
  const timer = setInterval(() => ctx!.heartbeat(), 5000);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/** The registry entry of a payment's ticker. */
export const asset = (ticker: string): Asset => ASSETS[ticker];

/** The observed deposit a stored payment stands for, as the chain adapter takes it. */
export function toDeposit(p: PaymentRow, c: ConfigRow): ObservedDeposit {
  return {
    network: p.network,
    ticker: p.ticker,
    txid: p.txidIn!,
    index: depositIndex(p.depositKey),
    recipient: c.addressIn,
    amount: BigInt(p.valueBase),
    blockNumber: p.blockNumber ?? 0n,
    blockHash: p.blockHash ?? '',
  };
}
