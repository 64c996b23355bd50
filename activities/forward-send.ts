import { ApplicationFailure } from '@temporalio/activity';
import { BroadcastRejectedError, type ForwardPlan } from '../src/chains/adapter';
import { loadPayment } from '../src/db/queries/payments';
import { ForwardCollisionError, nativeReserved, nonceFloor, restoreForwardPlan, storeForwardOnce } from '../src/db/queries/forwards';
import { NETWORKS, type Priority } from '../src/domain/assets';
import { percentOf } from '../src/domain/money';
import { scrubText } from '../src/observability/redact';
import { forwards } from '../src/observability/metrics';
import type { DepositDeps } from './deposit-types';
import { asset, permanent, planFromJson, planToJson, toDeposit } from './forward-support';
import { priceOfNativeInAsset } from './fee-inputs';

// The forward's sending (DESIGN 4): sign once, store, broadcast the stored bytes.

/** A forward sent: its txid, the node's refusal (a reading, not a verdict), and whether this call signed it. */
export interface Broadcast {
  txidOut: string;
  refused?: string;
  /** Signed, stored and accepted by the node in this very call (not a stored forward sent again). */
  signedNow?: boolean;
  /**
   * With `watch`, when signed now on a network whose head feed is live: this process's clock (ms) from
   * which the watcher's hint for this forward is no longer held back (forward_watch_until has passed).
   */
  watchUntil?: number;
  /**
   * With `watch`, when this process has head feeds: how many heads of the network it had been told of just
   * before the forward's own transaction was sent (BroadcastOptions.beforeSend; else before the broadcast
   * began). Only a later head can hold these bytes (a stored forward sent again is not watched).
   */
  headsBefore?: number;
}

/** A payment and its configuration as loadPayment read them. */
export type LoadedPayment = Awaited<ReturnType<typeof loadPayment>>;

/**
 * Signs the forward once and stores the bytes, then broadcasts the stored bytes. Forwards from one
 * address_in are serialised across processes (an advisory lock on the source), so each one is
 * prepared against the nonces and the stored forwards of those before it; forwards from different
 * addresses run side by side, and a shared sponsor (the EVM gas tank) is locked only while its
 * nonce is taken. A broadcast the node refuses is a reading, not a verdict: the workflow re-sends
 * the same bytes and lets the chain decide (forwardFate).
 */
export async function sendForward(deps: DepositDeps, uuid: string, loaded?: LoadedPayment, watch = false): Promise<Broadcast> {
  const { db } = deps;
  // What names the lock (network, address_in) never changes: a caller's earlier read serves; the lock's holder reads afresh.
  const { payment, config } = loaded ?? (await loadPayment(db, uuid));
  const adapter = await deps.adapter(payment.network);
  const a = asset(payment.ticker);
  // The caller (the forward activity) heartbeats while this waits for the lock or a top-up.
  return deps.withLock(`forward:${payment.network}:${config.addressIn}`, async () => {
    const fresh = await loadPayment(db, uuid);
    let plan: ForwardPlan;
    let signedNow = false;
    let watchUntil: number | undefined;
    if (fresh.payment.forwardRaw) {
      plan = planFromJson(fresh.payment.forwardRaw);
    } else {
      // The fee percent was chosen once, when the deposit was judged (activities/observed.ts), and stored.
      const feePercent = fresh.payment.feePercent;
      // Independent readings, side by side: a token's sponsor cost (a native coin's forward pays its own
      // network fee, which the adapter reads as it signs), the source's reserved nonces.
      const [estimate, floor, reserved] = await Promise.all([
        a.type === 'token' ? adapter.estimateForwardCost(payment.ticker, config.priority as Priority) : undefined,
        nonceFloor(db, payment.network, config.addressIn),
        a.type === 'token' ? nativeReserved(db, payment.network, config.addressIn, NETWORKS[a.network].nativeTicker) : undefined,
      ]);
      const value = BigInt(payment.valueBase);
      // The adapter withholds the sponsor cost its plan actually has, converted at this price.
      let sponsorPrice: string | undefined;
      if (estimate && estimate.sponsorCost > 0n) {
        sponsorPrice = await priceOfNativeInAsset(deps.prices, a);
        if (sponsorPrice === undefined) throw new Error('no price to recover the network cost yet; will retry');
      }
      try {
        plan = await adapter.prepareForward({
          deposit: toDeposit(payment, config),
          derivationIndex: config.derivationIndex,
          addressOut: config.addressOut,
          priority: config.priority as Priority,
          commission: percentOf(value, feePercent),
          sponsorPrice,
          nativeReserved: reserved,
          treasuryAddress: deps.treasuryAddress(payment.network),
          nonceFloor: floor,
        });
      } catch (e) {
        permanent(e);
      }
      // Stored (committed) before any broadcast: a retry re-sends these bytes, never new ones.
      let stored: boolean;
      const watchMs = watch ? (deps.heads?.watchMs(payment.network) ?? 0) : 0;
      try {
        stored = await storeForwardOnce(
          db,
          uuid,
          planToJson(plan),
          plan.txidOut,
          { network: payment.network, source: config.addressIn, nonce: plan.nonce },
          watchMs,
        );
        // The database set forward_watch_until from its clock before this returned: this clock's
        // now + watchMs is not earlier (a little margin for the rounding of timestamps).
        if (stored && watchMs > 0) watchUntil = Date.now() + watchMs + 5;
      } catch (e) {
        if (e instanceof ForwardCollisionError) throw ApplicationFailure.nonRetryable(e.message, 'ForwardCollision');
        throw e;
      }
      if (!stored) plan = planFromJson((await loadPayment(db, uuid)).payment.forwardRaw!);
      signedNow = stored;
    }
    const txidOut = plan.txidOut;
    // Heads that came while the forward waited for its lock, was signed or waited for its top-up cannot hold it: not counted.
    const heads = watchUntil !== undefined ? deps.heads : undefined;
    let headsBefore = heads?.seen(payment.network);
    const mark = heads ? { beforeSend: () => void (headsBefore = heads.seen(payment.network)) } : {};
    const watched = () => (headsBefore !== undefined ? { watchUntil, headsBefore } : {});
    try {
      await adapter.broadcast(plan, { onPlanChange: (next) => restoreForwardPlan(db, uuid, txidOut, planToJson(next)), ...mark });
    } catch (e) {
      if (!(e instanceof BroadcastRejectedError)) throw e;
      forwards.inc({ ticker: payment.ticker, outcome: 'refused' });
      return { txidOut, refused: scrubText(e.message), ...watched() };
    }
    forwards.inc({ ticker: payment.ticker, outcome: 'broadcast' });
    return signedNow ? { txidOut, signedNow, ...watched() } : { txidOut };
  });
}
