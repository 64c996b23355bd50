import { ApplicationFailure } from '@temporalio/activity';
import { BroadcastRejectedError, NodeUnavailableError, type ChainAdapter, type ForwardPlan, type ObservedDeposit } from '../src/chains/adapter';
import type { CallbackSnapshot } from '../src/callbacks/types';
import type { Db } from '../src/db/client';
import {
  insertDeposit,
  loadPayment,
  moveResult,
  storeForwardOnce,
  discardForwardIf,
  nonceFloor,
  restoreForwardPlan,
  rivalForwards,
  ForwardCollisionError,
  storeSnapshotOnce,
  updatePayment,
  type ConfigRow,
  type PaymentRow,
} from '../src/db/queries/payments';
import { ASSETS, NETWORKS, isSolFamily, type Asset, type Priority } from '../src/domain/assets';
import { computeFees, type FeePolicy } from '../src/domain/fees';
import { convertUnits, formatUnits, percentOf } from '../src/domain/money';
import type { PriceSource } from '../src/prices/source';
import { chooseFeeFor, minimumFor, priceOfNativeInAsset } from './pricing';
import { permanent, planFromJson, planToJson, withHeartbeat } from './forward-support';
import { depositsObserved, forwards } from '../src/observability/metrics';

/** The workflow's input: an observed deposit matched to a configuration, JSON-safe (amounts as strings). */
export interface DepositInput {
  configId: string;
  network: string;
  ticker: string;
  txid: string;
  index: number;
  recipient: string;
  amount: string;
  blockNumber: string;
  blockHash: string;
}

export interface PaymentInfo {
  uuid: string;
  ticker: string;
  network: string;
  notifyPending: boolean;
  requiredConfirmations: number;
  callbackHost: string;
  txidIn: string;
  result: string;
  /** Set once the forward is signed and stored: the workflow never asks for a second signature. */
  txidOut: string | null;
}

/**
 * One reading of a stored forward's fate, made once and acted on by the workflow as it stands
 * (observedAt: the block height of a `replaceable` reading, as a string).
 */
export type ForwardFate =
  | { status: 'confirmed'; txidOut: string }
  | { status: 'pending'; txidOut: string; note?: string }
  | { status: 'failed'; txidOut: string; reason: string }
  | { status: 'replaceable'; txidOut: string; reason: string; observedAt: string };

export type Evaluation = { eligible: true; evidence: boolean } | { eligible: false; reason: string };

export interface DepositDeps {
  db: Db;
  /** Cross-process lock by name (Database.withLock). */
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
  adapter(network: string): Promise<ChainAdapter>;
  prices: PriceSource;
  feePolicy: FeePolicy;
  /** Where a UTXO forward sends the commission (the operator's own address on that network). */
  treasuryAddress(network: string): string | undefined;
}

const asset = (ticker: string): Asset => ASSETS[ticker];

function toDeposit(p: PaymentRow, c: ConfigRow): ObservedDeposit {
  return {
    network: p.network,
    ticker: p.ticker,
    txid: p.txidIn!,
    index: Number(p.depositKey.split(':').pop()),
    recipient: c.addressIn,
    amount: BigInt(p.valueBase),
    blockNumber: p.blockNumber ?? 0n,
    blockHash: p.blockHash ?? '',
  };
}

export function createDepositActivities(deps: DepositDeps) {
  const { db } = deps;

  function info(payment: PaymentRow, config: ConfigRow): PaymentInfo {
    const a = asset(payment.ticker);
    return {
      uuid: payment.uuid,
      ticker: payment.ticker,
      network: payment.network,
      notifyPending: config.notifyPending,
      requiredConfirmations: isSolFamily(a) ? 1 : config.notifyConfirmations,
      callbackHost: new URL(config.callbackUrl).hostname.toLowerCase(),
      txidIn: payment.txidIn ?? '',
      result: payment.result,
      txidOut: payment.txidOut,
    };
  }

  function baseSnapshot(payment: PaymentRow, config: ConfigRow): CallbackSnapshot {
    const a = asset(payment.ticker);
    const utxo = NETWORKS[a.network].family === 'utxo';
    return {
      uuid: payment.uuid,
      coin: payment.ticker,
      address_in: config.addressIn,
      address_out: config.addressOut,
      txid_in: payment.txidIn ?? '',
      vout: utxo ? payment.vout : null,
      txid_out: null,
      confirmations: payment.confirmations,
      value_coin: formatUnits(BigInt(payment.valueBase), a.decimals),
      value_forwarded_coin: formatUnits(0n, a.decimals),
      fee_percent: '0.00',
      fee_coin: formatUnits(0n, a.decimals),
      price: null,
    };
  }

  return {
    /** Records the deposit once and returns its payment; the UUID is made here, once. */
    async recordDeposit(input: DepositInput): Promise<PaymentInfo> {
      const a = asset(input.ticker);
      const utxo = NETWORKS[a.network].family === 'utxo';
      const payment = await insertDeposit(db, {
        configId: input.configId,
        ticker: input.ticker,
        network: input.network,
        depositKey: `deposit:${input.network}:${input.txid}:${input.index}`,
        txidIn: input.txid,
        vout: utxo ? input.index : null,
        blockNumber: BigInt(input.blockNumber),
        blockHash: input.blockHash,
        valueBase: BigInt(input.amount),
      });
      depositsObserved.inc({ ticker: input.ticker });
      const { config } = await loadPayment(db, payment.uuid);
      return info(payment, config);
    },

    /**
     * Eligibility when observed (SPEC 3): the configured minimum, then whether the deposit covers the
     * commission and network costs. A node or price outage is not a verdict: it throws (retried) or
     * reports evidence=false, and the deposit stays.
     */
    async evaluate(uuid: string): Promise<Evaluation> {
      const { payment, config } = await loadPayment(db, uuid);
      const a = asset(payment.ticker);
      const value = BigInt(payment.valueBase);
      const minimum = await minimumFor(db, config, a);
      if (minimum !== undefined && value < minimum) {
        return { eligible: false, reason: `deposit ${formatUnits(value, a.decimals)} is below the minimum ${formatUnits(minimum, a.decimals)}` };
      }
      const adapter = await deps.adapter(payment.network);
      const cost = await adapter.estimateForwardCost(payment.ticker, config.priority as Priority);
      const feePercent = await chooseFeeFor(deps, config, a);
      let nativePrice: string | undefined;
      if (cost.sponsorCost > 0n) nativePrice = await priceOfNativeInAsset(deps.prices, a);
      const fees = computeFees({
        value,
        decimals: a.decimals,
        feePercent,
        costs: [
          { amount: cost.networkFee, sameAsset: true, decimals: a.decimals },
          ...(cost.sponsorCost > 0n ? [{ amount: cost.sponsorCost, sameAsset: false, decimals: ASSETS[NETWORKS[a.network].nativeTicker].decimals, priceInDeposit: nativePrice }] : []),
        ],
      });
      if (fees.eligible) return { eligible: true, evidence: true };
      if (cost.sponsorCost > 0n && nativePrice === undefined) return { eligible: true, evidence: false };
      return { eligible: false, reason: fees.reason };
    },

    async markFailed(uuid: string, reason: string): Promise<boolean> {
      return moveResult(db, uuid, ['pending', 'processing'], 'failed', reason);
    },

    async markProcessing(uuid: string): Promise<boolean> {
      return moveResult(db, uuid, ['pending'], 'processing');
    },

    /** Incoming confirmations, stored for logs; the sol family reports finality 0 or 1. */
    async confirmations(uuid: string): Promise<{ status: 'confirmed' | 'reorged'; confirmations: number; observedAt?: string }> {
      const { payment, config } = await loadPayment(db, uuid);
      const adapter = await deps.adapter(payment.network);
      const c = await adapter.confirmations(toDeposit(payment, config));
      if (c.status === 'reorged') return { status: 'reorged', confirmations: 0, observedAt: c.observedAt.toString() };
      const shown = isSolFamily(asset(payment.ticker)) ? Math.min(c.confirmations, 1) : c.confirmations;
      if (shown !== payment.confirmations) await updatePayment(db, uuid, { confirmations: shown });
      return { status: c.status, confirmations: shown };
    },

    async pendingSnapshot(uuid: string): Promise<CallbackSnapshot> {
      const { payment, config } = await loadPayment(db, uuid);
      const snap = baseSnapshot(payment, config);
      if (isSolFamily(asset(payment.ticker))) snap.confirmations = 0;
      return snap;
    },

    /**
     * Signs the forward once and stores the bytes, then broadcasts the stored bytes. Forwards from one
     * address_in are serialised across processes (an advisory lock on the source), so each one is
     * prepared against the nonces and the stored forwards of those before it; forwards from different
     * addresses run side by side, and a shared sponsor (the EVM gas tank) is locked only while its
     * nonce is taken. A broadcast the node refuses is a reading, not a verdict: the workflow re-sends
     * the same bytes and lets the chain decide (forwardFate).
     */
    async forward(uuid: string): Promise<{ txidOut: string; refused?: string }> {
      const { payment, config } = await loadPayment(db, uuid);
      const adapter = await deps.adapter(payment.network);
      const a = asset(payment.ticker);
      return withHeartbeat(() => deps.withLock(`forward:${payment.network}:${config.addressIn}`, async () => {
        const fresh = await loadPayment(db, uuid);
        let plan: ForwardPlan;
        if (fresh.payment.forwardRaw) {
          plan = planFromJson(fresh.payment.forwardRaw);
        } else {
          const feePercent = await chooseFeeFor(deps, config, a);
          const value = BigInt(payment.valueBase);
          let sponsorInAsset = 0n;
          const estimate = await adapter.estimateForwardCost(payment.ticker, config.priority as Priority);
          if (estimate.sponsorCost > 0n) {
            const price = await priceOfNativeInAsset(deps.prices, a);
            if (price === undefined) throw new Error('no price to recover the network cost yet; will retry');
            sponsorInAsset = convertUnits(estimate.sponsorCost, ASSETS[NETWORKS[a.network].nativeTicker].decimals, a.decimals, price);
          }
          try {
            plan = await adapter.prepareForward({
              deposit: toDeposit(payment, config),
              derivationIndex: config.derivationIndex,
              addressOut: config.addressOut,
              priority: config.priority as Priority,
              commission: percentOf(value, feePercent) + sponsorInAsset,
              treasuryAddress: deps.treasuryAddress(payment.network),
              nonceFloor: await nonceFloor(db, payment.network, config.addressIn),
            });
          } catch (e) {
            permanent(e);
          }
          // Stored (committed) before any broadcast: a retry re-sends these bytes, never new ones.
          let stored: boolean;
          try {
            stored = await storeForwardOnce(db, uuid, planToJson(plan), plan.txidOut, feePercent, {
              network: payment.network,
              source: config.addressIn,
              nonce: plan.nonce,
            });
          } catch (e) {
            if (e instanceof ForwardCollisionError) throw ApplicationFailure.nonRetryable(e.message, 'ForwardCollision');
            throw e;
          }
          if (!stored) plan = planFromJson((await loadPayment(db, uuid)).payment.forwardRaw!);
        }
        const txidOut = plan.txidOut;
        try {
          await adapter.broadcast(plan, { onPlanChange: (next) => restoreForwardPlan(db, uuid, txidOut, planToJson(next)) });
        } catch (e) {
          if (!(e instanceof BroadcastRejectedError)) throw e;
          forwards.inc({ ticker: payment.ticker, outcome: 'refused' });
          return { txidOut, refused: e.message };
        }
        forwards.inc({ ticker: payment.ticker, outcome: 'broadcast' });
        return { txidOut };
      }));
    },

    /**
     * The stored forward's fate from one reading of the chain: confirmed, failed for good, replaceable
     * (evidence the workflow confirms on a later block before acting), or pending — and when the node
     * does not hold the bytes, they are sent again (the same bytes; a dropped forward revives).
     */
    async forwardFate(uuid: string): Promise<ForwardFate> {
      const { payment, config } = await loadPayment(db, uuid);
      if (!payment.forwardRaw) throw ApplicationFailure.nonRetryable('no stored forward');
      const adapter = await deps.adapter(payment.network);
      const plan = planFromJson(payment.forwardRaw);
      const txidOut = plan.txidOut;
      const rivals = plan.nonce === undefined ? [] : await rivalForwards(db, payment.network, config.addressIn, plan.nonce, txidOut);
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
          if (s.known !== false) return { status: 'pending', txidOut, ...(s.note ? { note: s.note } : {}) };
      }
      try {
        await adapter.broadcast(plan, { waitForSponsor: false, onPlanChange: (next) => restoreForwardPlan(db, uuid, txidOut, planToJson(next)) });
        forwards.inc({ ticker: payment.ticker, outcome: 'rebroadcast' });
        return { status: 'pending', txidOut, ...(s.note ? { note: s.note } : {}) };
      } catch (e) {
        if (!(e instanceof BroadcastRejectedError || e instanceof NodeUnavailableError)) throw e;
        return { status: 'pending', txidOut, note: `${s.note ? `${s.note}; ` : ''}re-broadcast refused: ${e.message}` };
      }
    },

    /**
     * Superseded by forwardFate; kept for workflows recorded before the `forward-fate-once` patch. A
     * reading that is only evidence (replaceable) is reported as pending: no single reading re-signs.
     */
    async forwardStatus(uuid: string): Promise<'pending' | 'confirmed' | 'failed'> {
      const { payment } = await loadPayment(db, uuid);
      if (!payment.forwardRaw) throw ApplicationFailure.nonRetryable('no stored forward');
      const adapter = await deps.adapter(payment.network);
      const s = await adapter.forwardStatus(planFromJson(payment.forwardRaw));
      if (s.status === 'confirmed') forwards.inc({ ticker: payment.ticker, outcome: 'confirmed' });
      return s.status === 'replaceable' ? 'pending' : s.status;
    },

    /** Superseded by forwardFate (see forwardStatus): never advises a new plan. */
    async forwardFailure(uuid: string): Promise<{ reason: string; reprepare: boolean }> {
      const { payment } = await loadPayment(db, uuid);
      if (!payment.forwardRaw) throw ApplicationFailure.nonRetryable('no stored forward');
      const adapter = await deps.adapter(payment.network);
      const s = await adapter.forwardStatus(planFromJson(payment.forwardRaw));
      return { reason: s.status === 'failed' ? s.reason : `forward is ${s.status}`, reprepare: false };
    },

    /**
     * Forgets a stored forward that the chain says can never land (and moved nothing), so the next
     * forward() signs anew. Only the named txid is cleared: a plan stored meanwhile is kept.
     */
    async discardForward(uuid: string, txidOut: string): Promise<boolean> {
      return discardForwardIf(db, uuid, txidOut);
    },

    /**
     * The immutable confirmed snapshot (DESIGN 5): price captured once, fee_coin = value − forwarded
     * exactly; written once, and every later call returns what was written first.
     */
    async confirmedSnapshot(uuid: string): Promise<CallbackSnapshot> {
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
        confirmations: isSolFamily(a) ? 1 : payment.confirmations,
        value_forwarded_coin: formatUnits(plan.forwarded, a.decimals),
        fee_percent: payment.feePercent,
        fee_coin: formatUnits(fee, a.decimals),
        price,
      };
      await storeSnapshotOnce(db, uuid, { snapshot: snap, price, forwardedBase: plan.forwarded, feeBase: fee });
      return (await loadPayment(db, uuid)).payment.snapshot as CallbackSnapshot;
    },

    async paymentInfo(uuid: string): Promise<PaymentInfo> {
      const { payment, config } = await loadPayment(db, uuid);
      return info(payment, config);
    },
  };
}

export type DepositActivities = ReturnType<typeof createDepositActivities>;
