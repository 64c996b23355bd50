import type { Priority } from '../domain/assets';

/**
 * One interface every chain family implements (DESIGN 6, STYLE habit 2). SDK and RPC shapes stay inside
 * the family folders; what crosses this line is plain data with bigint amounts.
 */

/** Last block a watcher has fully scanned. `hash` lets the next scan notice that it was reorganised away. */
export interface Cursor {
  height: bigint;
  hash: string | null;
}

/** One incoming payment as seen on chain; its identity is (network, txid, index). */
export interface ObservedDeposit {
  network: string;
  ticker: string;
  txid: string;
  /** UTXO: output index (vout). EVM: log index for tokens, 0 for ETH. Solana: account index in the transaction. */
  index: number;
  recipient: string;
  /** Who paid, where the chain says so plainly (EVM): lets the watcher ignore the gateway's own top-ups. */
  sender?: string;
  amount: bigint;
  blockNumber: bigint;
  blockHash: string;
}

/** `deposit:{network}:{txid}:{vout or log index}` — the deposit workflow ID (DESIGN 1). */
export function depositKey(d: Pick<ObservedDeposit, 'network' | 'txid' | 'index'>): string {
  return `deposit:${d.network}:${d.txid}:${d.index}`;
}

export interface ScannedBlock {
  height: bigint;
  hash: string;
  /** Every payment in the block to any address: the watcher matches their recipients in one query. */
  deposits: ObservedDeposit[];
}

export interface ScanBatch {
  blocks: ScannedBlock[];
  /** Where the next scan starts from. Behind the input cursor when a reorg was detected at the cursor. */
  cursor: Cursor;
  /** True when the input cursor's block is no longer canonical and the batch restarted below it. */
  rewound: boolean;
}

export type Confirmations =
  /**
   * `block` is present when a reorg moved the very same deposit (same identity, recipient and amount)
   * into another canonical block: confirmations count from that block, never from the orphaned one.
   */
  | { status: 'confirmed'; confirmations: number; block?: { number: bigint; hash: string } }
  /** The deposit's block is no longer canonical and the deposit is in no other: it must never count. */
  | { status: 'reorged'; confirmations: 0 };

export interface ForwardRequest {
  deposit: ObservedDeposit;
  /** HD index of the payment's address_in (payment_configs.derivation_index). */
  derivationIndex: bigint;
  addressOut: string;
  priority: Priority;
  /**
   * Commission the gateway keeps, base units of the deposit's asset. Account chains leave it at
   * address_in; UTXO chains need `treasuryAddress` for it (or it must be 0).
   */
  commission?: bigint;
  treasuryAddress?: string;
}

/** A signed transaction, stored by the caller before it is ever broadcast (DESIGN 4). */
export interface SignedTx {
  role: 'gas-topup' | 'forward';
  txid: string;
  raw: string;
}

export interface ForwardPlan {
  network: string;
  ticker: string;
  /** In broadcast order; the last one is the forward whose txid is `txid_out`. */
  txs: SignedTx[];
  txidOut: string;
  /** What reaches address_out, base units of the deposit's asset. */
  forwarded: bigint;
  /** Network cost withheld from the deposit itself, base units of the deposit's asset. */
  networkFee: bigint;
  /**
   * Native-coin cost paid by the gateway (gas-tank top-up for ERC-20, fee payer and token-account rent
   * for SPL), base units of the network's native coin; the lifecycle converts it into fee_coin.
   */
  sponsorCost: bigint;
  /** Part of sponsorCost that is account-creation rent (Solana), reported separately. */
  rent: bigint;
}

export interface ForwardCostEstimate {
  /** Withheld from the deposit (native assets), base units of the deposit's asset. */
  networkFee: bigint;
  /** Paid by the gateway in the native coin (tokens). */
  sponsorCost: bigint;
}

/**
 * `pending` also covers a transaction the node does not know (evicted, or its block reorganised away):
 * re-broadcasting the stored bytes is always safe, so a caller that stays pending too long calls
 * broadcast(plan) again. `failed` is permanent (reverted, or its inputs spent by something else).
 */
export type ForwardStatus =
  | { status: 'pending' }
  | { status: 'confirmed'; blockNumber: bigint; blockHash: string }
  /**
   * `reprepare`: these bytes can never land and nothing of this plan moved the deposit (an expired
   * Solana blockhash, an EVM nonce taken by another transaction), so a new plan for the same deposit
   * is safe. Without it, failed is final for the payment.
   */
  | { status: 'failed'; reason: string; reprepare?: boolean };

export interface ChainAdapter {
  readonly network: string;
  validateAddress(address: string): boolean;
  deriveAddressIn(index: bigint): string;
  /** Canonical head (UTXO, EVM) or confirmed slot (Solana). */
  head(): Promise<Cursor & { hash: string }>;
  /**
   * Reads blocks after `cursor` (null = start at the current head) up to `maxBlocks`. A block is read
   * once; every candidate payment of every configured asset in it is returned.
   */
  scan(cursor: Cursor | null, maxBlocks?: number): Promise<ScanBatch>;
  confirmations(deposit: ObservedDeposit): Promise<Confirmations>;
  estimateForwardCost(ticker: string, priority: Priority): Promise<ForwardCostEstimate>;
  /** Builds and signs; broadcasts nothing. The caller stores the plan, then calls broadcast(plan). */
  prepareForward(req: ForwardRequest): Promise<ForwardPlan>;
  /** Sends the stored bytes in order; a transaction the node already knows or mined counts as sent. */
  broadcast(plan: ForwardPlan): Promise<void>;
  forwardStatus(plan: ForwardPlan): Promise<ForwardStatus>;
  close(): Promise<void>;
}

export class ChainError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The family cannot do this operation for this network (e.g. BCH forwarding). Permanent. */
export class UnsupportedOperationError extends ChainError {}
/** The deposit cannot pay its own forwarding cost, or an output would be dust. Permanent. */
export class InsufficientAmountError extends ChainError {}
/**
 * The node rejected a transaction for a reason other than "already known". Permanent for these bytes;
 * `reprepare` as in ForwardStatus: true when a fresh plan for the same deposit cannot double-send.
 */
export class BroadcastRejectedError extends ChainError {
  readonly reprepare: boolean;
  constructor(message: string, options?: { cause?: unknown; reprepare?: boolean }) {
    super(message, options);
    this.reprepare = options?.reprepare ?? false;
  }
}
/** A ticker or address this adapter is not configured for. Permanent. */
export class InvalidRequestError extends ChainError {}
/** The node did not answer or answered garbage; worth retrying. */
export class NodeUnavailableError extends ChainError {}
