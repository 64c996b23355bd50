import type { HeadWatch } from '../src/detection/heads';
import type { CallbackSnapshot } from '../src/callbacks/types';
import { loadPayment, moveResult, storeConfirmations, storeSnapshotOnce, type ConfigRow, type PaymentRow } from '../src/db/queries/payments';
import { callbackConfirmations, shownConfirmations } from '../src/domain/finality';
import { formatUnits } from '../src/domain/money';
import { logger } from '../src/observability/logger';
import { describeError } from '../src/observability/redact';
import type { ConfirmationsReading, DepositDeps, DepositInput, Evaluation, ForwardFate, ForwardSent, PaymentInfo } from './deposit-types';
import { baseSnapshot, paymentInfo as info } from './deposit-views';
import { createForwardActivities } from './forward';
import { asset, planFromJson, toDeposit, withHeartbeat } from './forward-support';
import { judgeObserved, recordObserved } from './observed';
export type { ConfirmationsReading, DepositDeps, DepositInput, Evaluation, ForwardFate, ForwardSent, PaymentInfo } from './deposit-types';


export function createDepositActivities(deps: DepositDeps) {
  const { db } = deps;
  const record = (input: DepositInput) => recordObserved(db, input);
  const judge = (payment: PaymentRow, config: ConfigRow): Promise<Evaluation> => judgeObserved(deps, payment, config);

  /**
   * The immutable confirmed snapshot (DESIGN 5): price captured once, fee_coin = value − forwarded
   * exactly; written once, and every later call returns what was written first.
   */
  async function confirmedSnapshot(uuid: string): Promise<CallbackSnapshot> {
    const { payment, config } = await loadPayment(db, uuid);
    if (payment.snapshot) return payment.snapshot as CallbackSnapshot;
    const a = asset(payment.ticker);
    const plan = planFromJson(payment.forwardRaw!);
    const value = BigInt(payment.valueBase);
    const fee = value - plan.forwarded;
    const price = (await deps.prices.usdt(a.symbol)) ?? null;
    const snap: CallbackSnapshot = {
      ...baseSnapshot(payment, config),
      txid_out: plan.txidOut,
      confirmations: callbackConfirmations(a.network, 'confirmed', payment.confirmations),
      value_forwarded_coin: formatUnits(plan.forwarded, a.decimals),
      fee_percent: payment.feePercent,
      fee_coin: formatUnits(fee, a.decimals),
      price,
    };
    // Written now, it is this one; otherwise another run wrote first, and that one stands.
    if (await storeSnapshotOnce(db, uuid, { snapshot: snap, price, forwardedBase: plan.forwarded, feeBase: fee })) return snap;
    return (await loadPayment(db, uuid)).payment.snapshot as CallbackSnapshot;
  }

  const forward = createForwardActivities(deps);

  /** One reading of the node, not stored (observeConfirmations); readConfirmations stores what it shows. */
  async function observeConfirmations(payment: PaymentRow, config: ConfigRow): Promise<ConfirmationsReading> {
    const adapter = await deps.adapter(payment.network);
    const c = await adapter.confirmations(toDeposit(payment, config));
    if (c.status === 'reorged') return { status: 'reorged', confirmations: 0, observedAt: c.observedAt.toString() };
    const shown = shownConfirmations(payment.network, c.confirmations);
    return { status: c.status, confirmations: shown };
  }

  /** Stores the confirmations a reading shows, when they changed (a reorged reading shows none). */
  async function storeShown(payment: PaymentRow, reading: ConfirmationsReading): Promise<void> {
    if (reading.status !== 'reorged' && reading.confirmations !== payment.confirmations) {
      await storeConfirmations(db, payment.uuid, reading.confirmations);
    }
  }

  async function readConfirmations(payment: PaymentRow, config: ConfigRow): Promise<ConfirmationsReading> {
    const reading = await observeConfirmations(payment, config);
    await storeShown(payment, reading);
    return reading;
  }

  /**
   * The forward effect: first a local activity of a few seconds, then, when that does not end in time, an
   * activity that heartbeats while it runs (it may wait for its source's lock or a gas top-up;
   * workflows/payment-forward.ts). Signs once, stores and broadcasts (activities/forward.ts; a stored
   * forward is re-sent, never signed twice), then makes the forward's first reading. A reading that fails is
   * no reading: the workflow makes its own.
   *
   * A forward signed now on a network whose head feed is live is watched for here, for a short window
   * (FORWARD_WATCH_MS): a reading at each new head, and one after the window. Included meanwhile, the
   * workflow goes on to its confirmed snapshot with no hint from the watcher and no workflow task for it
   * (the watcher holds its hint back for the window, forward_watch_until).
   */
  async function forwardWithFate(uuid: string): Promise<ForwardSent> {
    return withHeartbeat(async () => {
      // forward() reads the payment for its lock's name when not given it: read here, it names the network too.
      const read = deps.heads ? await loadPayment(db, uuid) : undefined;
      const { signedNow, watchUntil, headsBefore, ...sent } = await forward.forward(uuid, { watch: true }, read);
      if (watchUntil !== undefined && headsBefore !== undefined && deps.heads && read) {
        // A head announced after the forward's own transaction went out (even before the watch begins) is read; none before.
        const fate = await watchInclusion(uuid, read.payment.network, headsBefore, watchUntil, deps.heads);
        return fate ? { ...sent, fate } : sent;
      }
      // Signed and accepted by the node a moment ago: it is in the mempool, and a reading now would say so at
      // the cost of a read and the node's round trips. A stored forward sent again is read: it may be mined already.
      if (signedNow) return { ...sent, fate: { status: 'pending', txidOut: sent.txidOut, note: 'broadcast now' } };
      const fate = await readForwardFate(uuid);
      return fate ? { ...sent, fate } : sent;
    });
  }

  /** One reading of the forward's fate; undefined when the node or the database did not answer (no reading). */
  async function readForwardFate(uuid: string): Promise<ForwardFate | undefined> {
    try {
      return await forward.forwardFate(uuid);
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
      const read = await readForwardFate(uuid);
      if ((read && read.status !== 'pending') || last) return read;
    }
  }

  return {
    /**
     * The workflow's first step, one local activity: records the deposit once (the UUID is made here, once)
     * and judges it (SPEC 3; `judge`) on the rows just written.
     */
    async recordAndEvaluate(input: DepositInput): Promise<{ payment: PaymentInfo; evaluation: Evaluation }> {
      const { payment, config } = await record(input);
      const evaluation = await judge(payment, config);
      // The forward's key, derived while the deposit waits for finality (the machine is then mostly idle)
      // instead of when a block makes many deposits due at once. The same worker runs the due step (sticky
      // workflow tasks); another worker derives it then, as before. Only a hint: never fails the step.
      if (evaluation.eligible) {
        try {
          (await deps.adapter(payment.network)).keepSigningKey?.(config.derivationIndex);
        } catch {
          // The forward derives the key itself.
        }
      }
      return { payment: info(payment, config), evaluation };
    },

    async markFailed(uuid: string, reason: string): Promise<boolean> {
      return moveResult(db, uuid, ['pending', 'processing'], 'failed', reason);
    },

    /** The record_processing effect: pending → processing (a no-op when already past pending). */
    async recordProcessing(uuid: string): Promise<boolean> {
      return moveResult(db, uuid, ['pending'], 'processing');
    },

    /** Incoming confirmations, stored for logs; the sol family reports finality 0 or 1. */
    async confirmations(uuid: string): Promise<ConfirmationsReading> {
      const { payment, config } = await loadPayment(db, uuid);
      return readConfirmations(payment, config);
    },

    async pendingSnapshot(uuid: string): Promise<CallbackSnapshot> {
      const { payment, config } = await loadPayment(db, uuid);
      const snap = baseSnapshot(payment, config);
      snap.confirmations = callbackConfirmations(payment.network, 'pending', snap.confirmations);
      return snap;
    },

    confirmedSnapshot,

    forward: forwardWithFate,

    forwardFate: forward.forwardFate,

    discardForward: forward.discardForward,
  };
}

export type DepositActivities = ReturnType<typeof createDepositActivities>;
