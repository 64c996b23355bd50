import { ComputeBudgetProgram, SolanaJSONRPCError, type Connection, type PublicKey, type TransactionInstruction } from '@solana/web3.js';
import type { Priority } from '../../domain/assets';
import { NodeUnavailableError } from '../adapter';

/** Lamports per signature (the base fee). */
export const LAMPORTS_PER_SIGNATURE = 5000n;

/**
 * Compute units each forward asks for. The priority fee is charged on the units asked for, not those
 * used, and a transaction that runs out of them fails on chain (its fee paid, nothing moved): each is a
 * little above what the forward consumes on a validator (every instruction, ComputeBudget's included,
 * counts; creating an associated token account calls the System and Token programs).
 */
export const SOL_FORWARD_UNITS = 1_200;
export const SPL_FORWARD_UNITS = 12_000;
export const SPL_FORWARD_WITH_ACCOUNT_UNITS = 45_000;

/** SOLANA_PRIORITY_FEE_MAX_MICROLAMPORTS when unset: 1 lamport per compute unit at most. */
export const DEFAULT_PRIORITY_FEE_MAX_MICROLAMPORTS = 1_000_000n;

/** JSON-RPC 2.0's "method not found". */
const METHOD_NOT_FOUND = -32601;

/** Which of the recent non-zero prices a forward of each priority matches. */
const PERCENTILE: Record<Priority, number> = { slow: 50, default: 75, fast: 90 };

/**
 * The compute-unit price (micro-lamports) for a transaction that writes `accounts`: the priority's
 * percentile of the non-zero prices the cluster saw lately for them, capped by the operator's setting.
 * 0 when recent blocks paid none (a quiet cluster, a local one).
 */
export async function priorityPrice(connection: Connection, accounts: PublicKey[], priority: Priority, cap: bigint): Promise<bigint> {
  let recent: Awaited<ReturnType<Connection['getRecentPrioritizationFees']>>;
  try {
    recent = await connection.getRecentPrioritizationFees({ lockedWritableAccounts: accounts });
  } catch (e) {
    // A node that does not serve the method at all has no reading to give: the forward pays the base fee.
    if (e instanceof SolanaJSONRPCError && e.code === METHOD_NOT_FOUND) return 0n;
    throw e;
  }
  const paid = recent
    .map((r) => BigInt(r.prioritizationFee))
    .filter((f) => f > 0n)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (paid.length === 0) return 0n;
  const at = paid[Math.max(0, Math.ceil((PERCENTILE[priority] / 100) * paid.length) - 1)];
  return at < cap ? at : cap;
}

/** What the runtime charges above the base fee: the units asked for times the price, rounded up. */
export function priorityFeeLamports(units: number, microLamports: bigint): bigint {
  return (BigInt(units) * microLamports + 999_999n) / 1_000_000n;
}

/** The forward's ComputeBudget instructions; always both, so its fee is the one computed here. */
export function budgetInstructions(units: number, microLamports: bigint): TransactionInstruction[] {
  return [ComputeBudgetProgram.setComputeUnitLimit({ units }), ComputeBudgetProgram.setComputeUnitPrice({ microLamports })];
}

/**
 * The rent-exempt minimum of an account of `size` bytes. web3.js answers 0 when the node answers an
 * error there; no cluster exempts an account for nothing, so 0 is the node failing.
 */
export async function rentExemptMinimum(connection: Connection, size: number): Promise<bigint> {
  const rent = BigInt(await connection.getMinimumBalanceForRentExemption(size));
  if (rent <= 0n) throw new NodeUnavailableError('RPC gave no rent-exempt minimum');
  return rent;
}

/** A balance read with its typed error (getBalance wraps every failure in a plain Error). */
export async function balanceOf(connection: Connection, account: PublicKey): Promise<bigint> {
  return BigInt((await connection.getBalanceAndContext(account, 'confirmed')).value);
}
