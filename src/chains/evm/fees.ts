import type { JsonRpcProvider } from 'ethers';
import type { Priority } from '../../domain/assets';

export interface Eip1559Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** Reward percentile of recent blocks per priority. */
const PERCENTILE: Record<Priority, number> = { slow: 10, default: 50, fast: 90 };
/** Base fee headroom: a fee that survives this many full blocks of +12.5% each. */
const BASE_FEE_MULTIPLIER: Record<Priority, bigint> = { slow: 2n, default: 2n, fast: 3n };
/** When recent blocks carry no tips (quiet or local chains), still pay something. */
const MIN_TIP = 1_000_000n; // 0.001 gwei

/**
 * How long one fee reading serves a provider's callers. Every deposit asks twice (its evaluation, then its
 * forward), so a burst asked the node once per deposit per step; the reading is at most this old, well
 * inside the base fee headroom above (a base fee grows at most 12.5% a block).
 */
export const FEE_READING_MS = 1_000;

const readings = new WeakMap<JsonRpcProvider, Map<Priority, { at: number; fees: Promise<Eip1559Fees> }>>();

/**
 * EIP-1559 fees for a priority from eth_feeHistory: tip = reward percentile, max = k·baseFee + tip. Callers
 * within FEE_READING_MS of a reading share it (also while it is under way); a reading that failed is not kept.
 * `fresh`: a reading made now, whatever is kept (the published minimum follows the block that changed the
 * fee, not a reading from before it); later callers share it.
 */
export function eip1559Fees(provider: JsonRpcProvider, priority: Priority, opts: { fresh?: boolean } = {}): Promise<Eip1559Fees> {
  let byPriority = readings.get(provider);
  if (!byPriority) readings.set(provider, (byPriority = new Map()));
  const kept = byPriority.get(priority);
  const now = Date.now();
  if (kept && !opts.fresh && now - kept.at < FEE_READING_MS) return kept.fees;
  const fees = readFees(provider, priority);
  const entry = { at: now, fees };
  byPriority.set(priority, entry);
  fees.catch(() => {
    if (byPriority.get(priority) === entry) byPriority.delete(priority);
  });
  return fees;
}

async function readFees(provider: JsonRpcProvider, priority: Priority): Promise<Eip1559Fees> {
  const history = (await provider.send('eth_feeHistory', ['0xa', 'pending', [PERCENTILE[priority]]])) as {
    baseFeePerGas: string[];
    reward?: string[][];
  };
  const baseFee = BigInt(history.baseFeePerGas[history.baseFeePerGas.length - 1]);
  const rewards = (history.reward ?? []).map((r) => BigInt(r[0])).filter((r) => r > 0n).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const median = rewards.length ? rewards[Math.floor(rewards.length / 2)] : 0n;
  const tip = median > MIN_TIP ? median : MIN_TIP;
  return { maxPriorityFeePerGas: tip, maxFeePerGas: baseFee * BASE_FEE_MULTIPLIER[priority] + tip };
}

export const ETH_TRANSFER_GAS = 21_000n;
/** ERC-20 transfer gas when estimation is impossible; estimates get 25% headroom. */
export const TOKEN_TRANSFER_GAS_FALLBACK = 100_000n;
