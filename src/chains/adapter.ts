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
  /**
   * UTXO: output index (vout). EVM: log index for tokens, -1 for ETH sent by the transaction itself, 10^9 +
   * ordinal for ETH sent by a contract's internal call (src/chains/evm/internal-transfers.ts). Solana:
   * account index in the transaction.
   */
  index: number;
  recipient: string;
  /** Who paid, where the chain says so plainly (EVM): lets the watcher ignore the gateway's own top-ups. */
  sender?: string;
  amount: bigint;
  blockNumber: bigint;
  blockHash: string;
}

export { depositKey } from '../domain/deposit-key';

export interface ScannedBlock {
  height: bigint;
  hash: string;
  /** Every payment in the block to any address: the watcher matches their recipients in one query. */
  deposits: ObservedDeposit[];
  /**
   * Every transaction ID in the block, when the scan read them anyway: the watcher tells the workflow
   * whose forward it holds that the forward was included (a push, instead of each workflow polling).
   */
  txids?: string[];
  /**
   * What the block's transactions used up that only one transaction can, when the scan read it anyway: an
   * EVM account's nonces and the UTXO outputs spent. A stored forward that needs one of them and is not in
   * the block can never land as stored (another transaction took its place): the watcher tells its workflow.
   */
  nonces?: Array<{ source: string; nonce: bigint }>;
  outpoints?: Array<{ txid: string; vout: number }>;
  /**
   * A last check of a deposit whose recipient is watched, where making it for every candidate costs more than
   * reading the block (Solana: that the token account paid is its owner's associated one); a deposit it
   * refuses is not a payment. Absent: every candidate stands.
   */
  confirm?(deposit: ObservedDeposit): boolean;
}

export interface ScanScope {
  /**
   * False while no address of the network is watched: an adapter may leave out reads that only find
   * payments (EVM call traces). Default true.
   */
  watched?: boolean;
  /**
   * The address_in of every configuration of the network's family, as of the call: an adapter calls it after it
   * has listed the blocks it is about to read, so it holds every address a payment in those blocks can be to
   * (an address is handed out after its configuration is stored, and paid after that). The same array, only
   * ever appended to (a configuration is never deleted), from call to call. Given, an adapter may read only
   * the transactions that name a watched address (Solana: a mainnet block's other transactions cost more to
   * parse than the slot's share of a core); the deposits to watched addresses are the same, `txids` then lists
   * only those transactions. Absent: every transaction is read.
   */
  watchedAddresses?(): Promise<readonly string[]>;
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
  /**
   * A reading that the deposit's block is no longer canonical and the deposit is in no other, made by a
   * node whose head (`observedAt`) is past the deposit's height. A reading, not a verdict: the workflow
   * fails the payment only when a reading at a higher head says it again. A node that has not reached
   * the deposit's block yet (lagging) is NodeUnavailableError, never a reorg.
   */
  | { status: 'reorged'; confirmations: 0; observedAt: bigint };

export interface ForwardRequest {
  deposit: ObservedDeposit;
  /** HD index of the payment's address_in (payment_configs.derivation_index). */
  derivationIndex: bigint;
  addressOut: string;
  priority: Priority;
  /**
   * Commission the gateway keeps (the percent part), base units of the deposit's asset. Account chains
   * leave it at address_in (Solana moves one too small to stay there); UTXO chains need
   * `treasuryAddress` for it (or it must be 0).
   */
  commission?: bigint;
  /**
   * Units of the deposit's asset per 1 unit of the network's native coin (priceOfNativeInAsset). With it,
   * the adapter also withholds the plan's actual sponsorCost converted into the asset (convertUnits):
   * only the costs that applied to this forward.
   */
  sponsorPrice?: string;
  /**
   * EVM tokens: native coin at address_in that deposits still on record there need (the caller's
   * ledger). With it, spare ether above it (nothing of the source in flight) pays the forward's gas before
   * a top-up does; without it, every token forward brings its full top-up.
   */
  nativeReserved?: bigint;
  treasuryAddress?: string;
  /**
   * EVM: the lowest nonce this forward may take — one past every stored forward of the same source that
   * is not known to be mined. The node's pending count alone forgets a forward the mempool dropped.
   */
  nonceFloor?: number;
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
  /** EVM: the forward's account nonce (reserved per source, see ForwardRequest.nonceFloor). */
  nonce?: number;
  /** Solana: the last block height at which the forward's blockhash is still valid. */
  lastValidBlockHeight?: number;
  /** EVM: gas top-ups of this plan signed earlier and superseded (one of them may still be mined). */
  replacedTopups?: string[];
}

export interface ForwardCostEstimate {
  /** Withheld from the deposit (native assets), base units of the deposit's asset. */
  networkFee: bigint;
  /** Paid by the gateway in the native coin (tokens). */
  sponsorCost: bigint;
  /**
   * The smallest amount the chain accepts at address_out, base units of the asset: Solana the rent
   * exemption of an empty account; UTXO the node's dust threshold for the payout output; 0/absent when none.
   */
  payoutFloor?: bigint;
}

/**
 * One reading of a stored forward's fate.
 * - `pending`: not mined yet. `known` says whether the node holds it (false also covers a transaction
 *   evicted from the mempool or whose block was reorganised away: re-broadcasting the stored bytes is
 *   always safe). `note` explains a wait that needs an operator's eye.
 * - `failed`: final on chain (reverted, or failed in its block); nothing moved, nothing is re-signed.
 * - `replaceable`: evidence, final by the network's own rule, that these bytes can never land and moved
 *   nothing (a rival transaction of ours took the nonce and is final; the blockhash expired in finalized
 *   history and the transaction is in none). One reading is not enough: the caller acts only when a
 *   later reading at a higher `observedAt` (a new block) says the same.
 */
export type ForwardStatus =
  | { status: 'pending'; known?: boolean; note?: string }
  | { status: 'confirmed'; blockNumber: bigint; blockHash: string }
  | { status: 'failed'; reason: string }
  | { status: 'replaceable'; reason: string; observedAt: bigint };

export interface BroadcastOptions {
  waitForSponsor?: boolean;
  onPlanChange?: (plan: ForwardPlan) => Promise<void>;
  /**
   * Called right before the forward's own transaction is sent (after its sponsor's top-up, if any, was
   * mined): the forward cannot be in a block announced before this call. An adapter may not call it.
   */
  beforeSend?: () => void;
}

/** What the caller's records add to a forward's reading: its own other transactions at the same nonce. */
export interface ForwardContext {
  /** The list, or how to read it: then read only by a reading that needs it (the forward not mined and not known to the node). */
  rivals?: string[] | (() => Promise<string[]>);
}

/** A sweep: everything of one asset at a deposit address, moved to one of the operator's addresses. */
export interface SweepRequest {
  ticker: string;
  /** HD index of the address swept (payment_configs.derivation_index). */
  derivationIndex: bigint;
  /** The address swept; must be the one derivationIndex derives. */
  source: string;
  destination: string;
  /** EVM: as ForwardRequest.nonceFloor (forwards and sweeps of the source on record). */
  nonceFloor?: number;
  /**
   * The most to take from the balance (what balanceOf answered for the watcher's block): anything that
   * arrived since stays. Solana moves the whole balance or nothing, so there a balance that grew is refused.
   */
  maxBalance?: bigint;
}

export interface ChainAdapter {
  readonly network: string;
  validateAddress(address: string): boolean;
  deriveAddressIn(index: bigint): string;
  /**
   * Derives address_in `index`'s signing key now and keeps it for its forward, where the adapter keeps
   * keys (EVM): called while a deposit waits for finality, so the due forward does not derive it then.
   */
  keepSigningKey?(index: bigint): void;
  /** Canonical head (UTXO, EVM) or confirmed slot (Solana). */
  head(): Promise<Cursor & { hash: string }>;
  /**
   * Reads blocks after `cursor` (null = start at the current head) up to `maxBlocks`. A block is read
   * once; every candidate payment of every configured asset in it is returned.
   */
  scan(cursor: Cursor | null, maxBlocks?: number, opts?: ScanScope): Promise<ScanBatch>;
  /**
   * The timestamp (seconds) of the block at `height`, or of the next block after it where a slot has
   * none (Solana); null when there is none up to the head. A network without a cursor uses it to start
   * before its first configuration (src/detection/first-start.ts).
   */
  blockTime?(height: bigint): Promise<number | null>;
  /** The lowest block the node still serves whole (a pruned node or a Solana RPC keeps only recent ones). */
  oldestReadable?(): Promise<bigint>;
  confirmations(deposit: ObservedDeposit): Promise<Confirmations>;
  /**
   * `fresh`: from a reading of the node made now, not one shared with other callers for a moment (the EVM
   * fee reading, FEE_READING_MS): the published minimum reads the network as it is at its refresh.
   */
  estimateForwardCost(ticker: string, priority: Priority, opts?: { fresh?: boolean }): Promise<ForwardCostEstimate>;
  /** Builds and signs; broadcasts nothing. The caller stores the plan, then calls broadcast(plan). */
  prepareForward(req: ForwardRequest): Promise<ForwardPlan>;
  /**
   * Sends the stored bytes in order; a transaction the node already knows or mined counts as sent.
   * `waitForSponsor: false` sends what can go now and returns (a re-broadcast). When the plan changes
   * (an EVM gas top-up signed again), `onPlanChange` stores it before the new bytes are sent.
   */
  broadcast(plan: ForwardPlan, opts?: BroadcastOptions): Promise<void>;
  forwardStatus(plan: ForwardPlan, ctx?: ForwardContext): Promise<ForwardStatus>;
  /**
   * An address's balance of one configured asset (native or token), base units. With `seenUpTo` (the block
   * or slot the watcher has read up to), only what arrived by then and is still there: EVM, the lesser of
   * the balances at that block and now;
   * Solana, whose nodes keep no past balances, answers the balance now, or null when a transaction touched
   * the account after that slot (something the watcher has not read yet).
   */
  balanceOf?(address: string, ticker: string, seenUpTo?: bigint): Promise<bigint | null>;
  /**
   * Signs a sweep of the source's whole balance of `ticker` (ForwardPlan: `forwarded` is what reaches the
   * destination, `networkFee` what a native sweep withholds); broadcast and forwardStatus take it as a
   * forward. InsufficientAmountError when the balance does not pay its own way. Account chains only.
   */
  prepareSweep?(req: SweepRequest): Promise<ForwardPlan>;
  close(): Promise<void>;
}

export { ChainError, UnsupportedOperationError, InsufficientAmountError, BroadcastRejectedError, InvalidRequestError, NodeUnavailableError } from './errors';
