import type { HeadWatch } from '../src/detection/heads';
import { loadPayment, moveResult } from '../src/db/queries/payments';
import { logger } from '../src/observability/logger';
import { describeError } from '../src/observability/redact';
import type { DepositDeps, ForwardFate, ForwardSent } from './deposit-types';
import { forwardFate } from './forward-fate';
import { sendForward } from './forward-send';
import { withHeartbeat } from './forward-support';

/**
 * The forward effect: records `processing`, then forwards; first a local activity of a few seconds, then,
 * when that does not end in time, an activity that heartbeats while it runs (it may wait for its source's
 * lock or a gas top-up; workflows/payment-forward.ts). Signs once, stores and broadcasts
 * (activities/forward-send.ts; a stored forward is re-sent, never signed twice), then makes the forward's
 * first reading. A reading that fails is no reading: the workflow makes its own.
 *
 * A forward signed now on a network whose head feed is live is watched for here, for a short window
 * (FORWARD_WATCH_MS): a reading at each new head, and one after the window. Included meanwhile, the
 * workflow goes on to its confirmed snapshot with no hint from the watcher and no workflow task for it
 * (the watcher holds its hint back for the window, forward_watch_until).
 */
export async function forwardWithFate(deps: DepositDeps, uuid: string): Promise<ForwardSent> {
  const { db } = deps;
  return withHeartbeat(async () => {
    // The lifecycle's processing, recorded by this step before anything is signed (a no-op past pending).
    await moveResult(db, uuid, ['pending'], 'processing');
    // forward() reads the payment for its lock's name when not given it: read here, it names the network too.
    const read = deps.heads ? await loadPayment(db, uuid) : undefined;
    const { signedNow, watchUntil, headsBefore, ...sent } = await sendForward(deps, uuid, read, true);
    if (watchUntil !== undefined && headsBefore !== undefined && deps.heads && read) {
      // A head announced after the forward's own transaction went out (even before the watch begins) is read; none before.
      const fate = await watchInclusion(deps, uuid, read.payment.network, headsBefore, watchUntil, deps.heads);
      return fate ? { ...sent, fate } : sent;
    }
    // Signed and accepted by the node a moment ago: it is in the mempool, and a reading now would say so at
    // the cost of a read and the node's round trips. A stored forward sent again is read: it may be mined already.
    if (signedNow) return { ...sent, fate: { status: 'pending', txidOut: sent.txidOut, note: 'broadcast now' } };
    const fate = await readForwardFate(deps, uuid);
    return fate ? { ...sent, fate } : sent;
  });
}

/** One reading of the forward's fate; undefined when the node or the database did not answer (no reading). */
async function readForwardFate(deps: DepositDeps, uuid: string): Promise<ForwardFate | undefined> {
  try {
    return await forwardFate(deps, uuid);
  } catch (e) {
    logger.debug({ payment: uuid, err: describeError(e) }, 'forward reading failed; the workflow reads again');
    return undefined;
  }
}

/**
 * Reads the forward's fate at each new head of its network until one is not pending, and once more
 * after `until` (this clock): that last reading starts after every block the watcher held a hint back
 * for, so a forward included in one of them is seen here. A reading that fails is no reading.
 */
async function watchInclusion(
  deps: DepositDeps,
  uuid: string,
  network: string,
  after: number,
  until: number,
  heads: HeadWatch,
): Promise<ForwardFate | undefined> {
  for (let seen = after; ; ) {
    const left = until - Date.now();
    if (left > 0) await heads.next(network, seen, left);
    seen = heads.seen(network);
    const last = Date.now() >= until;
    const read = await readForwardFate(deps, uuid);
    if ((read && read.status !== 'pending') || last) return read;
  }
}
