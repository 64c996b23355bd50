import type { ChainAdapter } from '../src/chains/adapter';
import type { Db } from '../src/db/client';
import { readDeposit, type DepositReading } from '../src/db/queries/first-step';
import { loadConfig, recordDeposit, reviveDeposit, storeFeePercent, type ConfigRow, type NewDeposit, type PaymentRow } from '../src/db/queries/payments';
import { callbackHost } from '../src/domain/callback-host';
import { NETWORKS, type Priority } from '../src/domain/assets';
import { computeFees, type FeePolicy } from '../src/domain/fees';
import { depositMinimum } from '../src/domain/minimum';
import { depositKey } from '../src/domain/deposit-key';
import { dueHeight } from '../src/domain/finality';
import { formatUnits } from '../src/domain/money';
import { depositsObserved } from '../src/observability/metrics';
import type { PriceSource } from '../src/prices/source';
import type { DepositInput, Evaluation } from './deposit-types';
import { asset } from './forward-support';
import { minimumFor } from './minimums';
import { feePercentOf, priceOfNativeInAsset, rollingVolumeUsdt, volumeSince, volumeUsdt } from './fee-inputs';

// A deposit's first step, when the watcher has seen it: its payment row, and whether it is worth forwarding.

/** What judging a deposit reads: the minimum and fee rows, the node's costs, prices. */
export interface JudgeDeps {
  db: Db;
  adapter(network: string): Promise<ChainAdapter>;
  prices: PriceSource;
  feePolicy: FeePolicy;
}

/**
 * Records the deposit once (the UUID is made here, once) and reads what judging it takes (DepositReading):
 * one statement when the watcher's batch wrote the row, as it usually has. A payment that failed before
 * anything was forwarded is a deposit judged reorganised out and now mined again (the only failed payment
 * whose workflow the watcher starts anew): taken up again, same UUID, from its new block.
 */
export async function recordObserved(db: Db, input: DepositInput, now = new Date()): Promise<DepositReading> {
  const key = depositKey(input);
  let read = await readDeposit(db, key, volumeSince(now));
  const deposit = (config: ConfigRow): NewDeposit => ({
    configId: input.configId,
    ticker: input.ticker,
    network: input.network,
    depositKey: key,
    txidIn: input.txid,
    vout: NETWORKS[asset(input.ticker).network].family === 'utxo' ? input.index : null,
    blockNumber: BigInt(input.blockNumber),
    blockHash: input.blockHash,
    valueBase: BigInt(input.amount),
    dueHeight: dueHeight(input.network, BigInt(input.blockNumber), config.notifyConfirmations),
  });
  if (!read) {
    const recorded = await recordDeposit(db, deposit(await loadConfig(db, input.configId)));
    // Counted by whoever writes the row (usually the watcher's batch), once: this activity may run again.
    if (recorded.made) depositsObserved.inc({ ticker: input.ticker });
    read = await readDeposit(db, key, volumeSince(now));
    if (!read) throw new Error(`deposit ${key} not found after it was recorded`);
  }
  return { ...read, payment: await reviveDeposit(db, read.payment, deposit(read.config)) };
}

/**
 * Eligibility when observed (SPEC 3): below the current minimum is the one verdict (final). Above it, the
 * payment's fee percent is chosen (the host's tier or override) and stored for its forward; and
 * whether the deposit covers the commission and network costs now is evidence for the pending callback
 * only: a node or price outage throws (retried), a cost above the deposit reports evidence=false, and the
 * deposit stays (the forward waits until it pays its way). `read`: the minimum state and the host's volume
 * as recordObserved read them; without it they are read here.
 */
export async function judgeObserved(deps: JudgeDeps, payment: PaymentRow, config: ConfigRow, read?: Pick<DepositReading, 'minimum' | 'volume'>): Promise<Evaluation> {
  const a = asset(payment.ticker);
  const value = BigInt(payment.valueBase);
  const minimum = read ? depositMinimum(read.minimum, a) : await minimumFor(deps.db, config, a);
  if (minimum !== undefined && value < minimum) {
    return { eligible: false, reason: `deposit ${formatUnits(value, a.decimals)} is below the minimum ${formatUnits(minimum, a.decimals)}` };
  }
  const volume = read ? volumeUsdt(read.volume) : await rollingVolumeUsdt(deps.db, callbackHost(config.callbackUrl));
  // Chosen here, once, and stored: the forward takes its commission by this percent, whatever the tier is then.
  const feePercent = feePercentOf(deps.feePolicy, config, a, volume);
  const [fees] = await Promise.all([costsCovered(deps, payment, config, feePercent), storeFeePercent(deps.db, payment.uuid, feePercent)]);
  // At or above the minimum, a cost above what the deposit can pay is a reading of now (a fee spike, a price
  // missing), not a verdict: the pending callback is withheld, and the forward waits until it pays its way.
  return { eligible: true, evidence: fees.eligible };
}

/** Whether the deposit pays the commission and the network's costs as the node and prices tell them now. */
async function costsCovered(deps: JudgeDeps, payment: PaymentRow, config: ConfigRow, feePercent: string) {
  const a = asset(payment.ticker);
  const adapter = await deps.adapter(payment.network);
  const cost = await adapter.estimateForwardCost(payment.ticker, config.priority as Priority);
  let nativePrice: string | undefined;
  if (cost.sponsorCost > 0n) nativePrice = await priceOfNativeInAsset(deps.prices, a);
  return computeFees({
    value: BigInt(payment.valueBase),
    asset: a,
    feePercent,
    costs: [{ amount: cost.networkFee, paidIn: 'asset' }, ...(cost.sponsorCost > 0n ? [{ amount: cost.sponsorCost, paidIn: 'native' as const, priceInAsset: nativePrice }] : [])],
  });
}
