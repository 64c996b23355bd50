import { ApplicationFailure } from '@temporalio/activity';
import { BroadcastRejectedError, NodeUnavailableError } from '../src/chains/adapter';
import { loadPayment } from '../src/db/queries/payments';
import { restoreForwardPlan, rivalForwards } from '../src/db/queries/forwards';
import { logger } from '../src/observability/logger';
import { scrubText } from '../src/observability/redact';
import { forwards } from '../src/observability/metrics';
import type { DepositDeps, ForwardFate } from './deposit-types';
import { planFromJson, planToJson } from './forward-support';

// A stored forward's fate, read from the chain (DESIGN 4): the reading the workflow decides by.

/**
 * The stored forward's fate from one reading of the chain: confirmed, failed for good, replaceable
 * (evidence the workflow confirms on a later block before acting), or pending — and when the node
 * does not hold the bytes, they are sent again (the same bytes; a dropped forward revives).
 */
export async function forwardFate(deps: DepositDeps, uuid: string): Promise<ForwardFate> {
  const { db } = deps;
  const { payment, config } = await loadPayment(db, uuid);
  if (!payment.forwardRaw) throw ApplicationFailure.nonRetryable('no stored forward');
  const adapter = await deps.adapter(payment.network);
  const plan = planFromJson(payment.forwardRaw);
  const txidOut = plan.txidOut;
  // Read only when the reading gets that far: a mined or known forward (the usual reading) needs no rivals.
  const nonce = plan.nonce;
  const rivals = nonce === undefined ? [] : () => rivalForwards(db, payment.network, config.addressIn, nonce, txidOut);
  const s = await adapter.forwardStatus(plan, { rivals });
  switch (s.status) {
    case 'confirmed':
      forwards.inc({ ticker: payment.ticker, outcome: 'confirmed' });
      return { status: 'confirmed', txidOut };
    case 'failed':
      return { status: 'failed', txidOut, reason: s.reason };
    case 'replaceable':
      return { status: 'replaceable', txidOut, reason: s.reason, observedAt: s.observedAt.toString() };
    case 'pending':
      if (s.note) logger.warn({ payment: uuid, txidOut, nonce: plan.nonce, note: s.note }, 'forward waiting');
      if (s.known !== false) return { status: 'pending', txidOut, ...(s.note ? { note: s.note } : {}) };
  }
  try {
    await adapter.broadcast(plan, { waitForSponsor: false, onPlanChange: (next) => restoreForwardPlan(db, uuid, txidOut, planToJson(next)) });
    forwards.inc({ ticker: payment.ticker, outcome: 'rebroadcast' });
    return { status: 'pending', txidOut, ...(s.note ? { note: s.note } : {}) };
  } catch (e) {
    if (!(e instanceof BroadcastRejectedError || e instanceof NodeUnavailableError)) throw e;
    const note = `${s.note ? `${s.note}; ` : ''}re-broadcast refused: ${scrubText(e.message)}`;
    // The wait goes on; the operator sees why (the workflow keeps re-sending at its backoff).
    logger.warn({ payment: uuid, txidOut, nonce: plan.nonce, note }, 'forward not held by the node; re-sending');
    return { status: 'pending', txidOut, note };
  }
}
