import { Keypair, SendTransactionError, type Connection } from '@solana/web3.js';
import { ASSETS, NETWORKS, type Priority } from '../../domain/assets';
import {
  BroadcastRejectedError,
  InvalidRequestError,
  type ChainAdapter,
  type Confirmations,
  type Cursor,
  type ForwardCostEstimate,
  type ForwardPlan,
  type ForwardRequest,
  type ForwardStatus,
  type ObservedDeposit,
  type ScanBatch,
  type ScannedBlock,
  type ScanScope,
  type SweepRequest,
} from '../adapter';
import { deriveAddressIn, deriveSolKeypair, validateAddress } from '../addresses';
import type { ChainMode } from '../config';
import type { HdSeed } from '../keys';
import { solFeePayerSeed } from '../sponsor';
import { rpcErrorMessage } from '../rpc-errors';
import { ACCOUNT_SIZE } from '@solana/spl-token';
import {
  DEFAULT_PRIORITY_FEE_MAX_MICROLAMPORTS,
  LAMPORTS_PER_SIGNATURE,
  SOL_FORWARD_UNITS,
  SPL_FORWARD_WITH_ACCOUNT_UNITS,
  priorityFeeLamports,
  priorityPrice,
  rentExemptMinimum,
} from './fees';
import { prepareSolForward, prepareSplForward, recentBlockhashOf, sourceOf } from './forward';
import { classifySolError, solConnection } from './rpc';
import { scannedBlock } from './scan';
import { SolBlockReader } from './block-reader';
import type { SolBlockThread } from './block-thread';
import { prepareSolSweep, prepareSplSweep, solBalance, solBalanceSeen } from './sweep';
import { EndpointPool } from '../endpoints';
import { startEndpointHealth, type EndpointHealth, type HealthBounds } from '../endpoint-health';

export interface SolAdapterOptions {
  network: string;
  mode: ChainMode;
  rpcUrl: string;
  seed: HdSeed;
  /** ticker → SPL mint of the configured tokens. */
  tokens: Record<string, string>;
  /** Cap on a forward's compute-unit price, micro-lamports (SOLANA_PRIORITY_FEE_MAX_MICROLAMPORTS). */
  priorityFeeMax?: bigint;
  /** Bounds of the endpoints' health checks (src/chains/endpoint-health.ts); per-network defaults. */
  endpointHealth?: Partial<HealthBounds>;
  /** Where the watcher's blocks are fetched and scanned (./block-thread.ts); one with the default heap bounds when absent. */
  blockThread?: SolBlockThread;
}

/**
 * Solana: a "block" is a confirmed slot. Finality is binary (SPEC 2.4): 1 once the deposit's
 * transaction is finalized, else 0; a transaction the cluster forgot is reported as reorged.
 */
export class SolAdapter implements ChainAdapter {
  readonly network: string;
  readonly connection: Connection;
  /** The watcher's reads (head, block list, blocks): plain JSON-RPC, see ./block-reader.ts. */
  private readonly reader: SolBlockReader;
  private readonly mints = new Map<string, string>();
  private readonly credentials: readonly string[];
  private readonly nativeTicker: string;
  private readonly health: EndpointHealth;

  constructor(private readonly opts: SolAdapterOptions) {
    this.network = opts.network;
    this.nativeTicker = NETWORKS[opts.network].nativeTicker;
    // Every request goes through the pool's fetch: a read to a healthy endpoint, a broadcast to all of
    // them, each with its own basic-auth header (Connection takes no credentials from a URL).
    const pool = new EndpointPool(opts.network, opts.rpcUrl);
    this.credentials = pool.credentials;
    this.connection = solConnection(pool);
    this.reader = new SolBlockReader(pool, undefined, undefined, opts.blockThread);
    this.health = startEndpointHealth(pool, {
      family: 'sol',
      bounds: opts.endpointHealth,
      sponsor: { role: 'fee_payer', balance: async () => BigInt(await this.connection.getBalance(this.feePayer().publicKey)) },
    });
    for (const [ticker, mint] of Object.entries(opts.tokens)) this.mints.set(mint, ticker);
  }

  validateAddress(address: string): boolean {
    return validateAddress(this.network, this.opts.mode, address);
  }

  deriveAddressIn(index: bigint): string {
    return deriveAddressIn(this.opts.seed, this.network, this.opts.mode, index);
  }

  /** Made once: its public key is noble's pure JS (about half a millisecond here) at every forward. */
  private feePayerKey: Keypair | undefined;

  feePayer(): Keypair {
    return (this.feePayerKey ??= Keypair.fromSeed(solFeePayerSeed(this.opts.seed)));
  }

  async head(): Promise<Cursor & { hash: string }> {
    const slot = await this.reader.slot();
    return { height: BigInt(slot), hash: (await this.reader.blockhash(slot)) ?? '' };
  }

  async scan(cursor: Cursor | null, maxBlocks = 100, scope: ScanScope = {}): Promise<ScanBatch> {
    const head = await this.head();
    if (!cursor) return { blocks: [], cursor: head, rewound: false };
    // Confirmed slots are not rolled back; a cursor above the head means the cluster itself was reset
    // (a local surfnet restarted), so the new chain is read from its start.
    const rewound = cursor.height > head.height;
    const after = rewound ? -1 : Number(cursor.height);
    if (!rewound && head.height === cursor.height) return { blocks: [], cursor, rewound };
    // Skipped slots have no block; getBlocks lists the ones that exist.
    const slots = await this.reader.slotsAfter(after, Number(head.height), maxBlocks);
    const blocks: ScannedBlock[] = [];
    const ctx = { network: this.network, nativeTicker: this.nativeTicker, mints: this.mints };
    if (scope.watchedAddresses) {
      // Asked once the slots are listed: every block read below was made before, so the answer covers them.
      const watched = await scope.watchedAddresses();
      // Nothing watched: no block can pay a deposit or hold a forward, so only their hashes are read (and the
      // block thread is not started).
      const read = watched.length
        ? (s: number) => this.reader.watchedBlock(s, watched)
        : async (s: number) => {
            const hash = await this.reader.blockhash(s);
            return hash === null ? null : { blockhash: hash, transactions: [] };
          };
      for await (const [slot, b] of this.reader.blocks(slots, read)) if (b) blocks.push(scannedBlock(b, slot, ctx));
    } else {
      for await (const [slot, b] of this.reader.blocks(slots)) if (b) blocks.push(scannedBlock(b, slot, ctx));
    }
    // With fewer than maxBlocks existing blocks the whole range up to the head has been read.
    const next: Cursor = slots.length < maxBlocks ? head : { height: blocks[blocks.length - 1].height, hash: blocks[blocks.length - 1].hash };
    return { blocks, cursor: next, rewound };
  }

  async blockTime(height: bigint): Promise<number | null> {
    // A skipped slot has no block (nor time): the next block's stands for it.
    const [slot] = await this.reader.slotsAfter(Number(height) - 1, Number(height) + 500, 1);
    return slot === undefined ? null : this.reader.rpc<number | null>('getBlockTime', [slot]);
  }

  async oldestReadable(): Promise<bigint> {
    return BigInt(await this.call(() => this.connection.getFirstAvailableBlock()));
  }

  async confirmations(d: ObservedDeposit): Promise<Confirmations> {
    const { value } = await this.call(() => this.connection.getSignatureStatuses([d.txid], { searchTransactionHistory: true }));
    const s = value[0];
    if (s && !s.err) return { status: 'confirmed', confirmations: s.confirmationStatus === 'finalized' ? 1 : 0 };
    // No status is also what a lagging node answers: the ledger itself is asked before it counts as gone.
    if (!s) {
      const tx = await this.call(() => this.connection.getTransaction(d.txid, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }));
      if (tx && !tx.meta?.err) return { status: 'confirmed', confirmations: 0 };
    }
    const slot = await this.call(() => this.connection.getSlot('confirmed'));
    return { status: 'reorged', confirmations: 0, observedAt: BigInt(slot) };
  }

  /**
   * The priority fee at the cluster's recent prices (no account named: the cluster's own). SOL: the payout
   * floor is an empty account's rent exemption (a new address_out takes no less). SPL, the worst case: the
   * merchant's token account does not exist yet.
   */
  async estimateForwardCost(ticker: string, priority: Priority): Promise<ForwardCostEstimate> {
    const a = this.asset(ticker);
    const price = await this.call(() => priorityPrice(this.connection, [], priority, this.priorityFeeMax));
    if (a.type === 'native') {
      const payoutFloor = await this.call(() => rentExemptMinimum(this.connection, 0));
      return { networkFee: LAMPORTS_PER_SIGNATURE + priorityFeeLamports(SOL_FORWARD_UNITS, price), sponsorCost: 0n, payoutFloor };
    }
    const rent = await this.call(() => rentExemptMinimum(this.connection, ACCOUNT_SIZE));
    return { networkFee: 0n, sponsorCost: 2n * LAMPORTS_PER_SIGNATURE + priorityFeeLamports(SPL_FORWARD_WITH_ACCOUNT_UNITS, price) + rent };
  }

  private get priorityFeeMax(): bigint {
    return this.opts.priorityFeeMax ?? DEFAULT_PRIORITY_FEE_MAX_MICROLAMPORTS;
  }

  async prepareForward(req: ForwardRequest): Promise<ForwardPlan> {
    const a = this.asset(req.deposit.ticker);
    if (!this.validateAddress(req.addressOut)) throw new InvalidRequestError(`not a Solana address: ${req.addressOut}`);
    const source = deriveSolKeypair(this.opts.seed, this.network, this.opts.mode, req.derivationIndex).keypair;
    if (source.publicKey.toBase58() !== req.deposit.recipient) throw new InvalidRequestError('derivation index does not own the deposit address');
    const ctx = { connection: this.connection, network: this.network, source, feePayer: this.feePayer(), priorityFeeMax: this.priorityFeeMax };
    return this.call(() => (a.type === 'native' ? prepareSolForward(ctx, req) : prepareSplForward(ctx, this.opts.tokens[a.ticker], req)));
  }

  async balanceOf(address: string, ticker: string, seenUpTo?: bigint): Promise<bigint | null> {
    const a = this.asset(ticker);
    const mint = a.type === 'native' ? undefined : this.opts.tokens[ticker];
    return this.call(() => (seenUpTo === undefined ? solBalance(this.connection, address, mint) : solBalanceSeen(this.connection, address, seenUpTo, mint)));
  }

  async prepareSweep(req: SweepRequest): Promise<ForwardPlan> {
    const a = this.asset(req.ticker);
    if (!this.validateAddress(req.destination)) throw new InvalidRequestError(`not a Solana address: ${req.destination}`);
    const source = deriveSolKeypair(this.opts.seed, this.network, this.opts.mode, req.derivationIndex).keypair;
    if (source.publicKey.toBase58() !== req.source) throw new InvalidRequestError('derivation index does not own the swept address');
    const ctx = { connection: this.connection, network: this.network, source, feePayer: this.feePayer(), priorityFeeMax: this.priorityFeeMax };
    return this.call(() => (a.type === 'native' ? prepareSolSweep(ctx, req) : prepareSplSweep(ctx, this.opts.tokens[a.ticker], req)));
  }

  async broadcast(plan: ForwardPlan): Promise<void> {
    for (const tx of plan.txs) {
      const { value } = await this.call(() => this.connection.getSignatureStatuses([tx.txid], { searchTransactionHistory: true }));
      if (value[0]) continue; // already landed
      try {
        await this.connection.sendRawTransaction(Buffer.from(tx.raw, 'hex'), { skipPreflight: false, preflightCommitment: 'confirmed', maxRetries: 5 });
      } catch (e) {
        if (!(e instanceof SendTransactionError)) throw classifySolError(e);
        // "Already processed" is a refusal too: the status cache, asked again, tells it by the txid.
        const again = await this.call(() => this.connection.getSignatureStatuses([tx.txid], { searchTransactionHistory: true }));
        if (again.value[0]) continue;
        throw new BroadcastRejectedError(`${tx.txid} rejected: ${rpcErrorMessage(e, this.credentials)}`, { cause: e });
      }
    }
  }

  /**
   * Landed: confirmed, or failed with its error. Unknown: pending while the blockhash may still land it;
   * replaceable only when the finalized chain is past the blockhash's last valid height and the
   * transaction is in neither the status cache nor the source's finalized history (two sources, since
   * a lagging or lying node also answers "unknown" for a landed transaction).
   */
  async forwardStatus(plan: ForwardPlan): Promise<ForwardStatus> {
    const { value } = await this.call(() => this.connection.getSignatureStatuses([plan.txidOut], { searchTransactionHistory: true }));
    const s = value[0];
    if (s?.err) return { status: 'failed', reason: JSON.stringify(s.err) };
    if (s && (s.confirmationStatus === 'confirmed' || s.confirmationStatus === 'finalized')) {
      const b = await this.call(() => this.connection.getParsedBlock(s.slot, { maxSupportedTransactionVersion: 0, transactionDetails: 'none', rewards: false }));
      return { status: 'confirmed', blockNumber: BigInt(s.slot), blockHash: b?.blockhash ?? '' };
    }
    if (s) return { status: 'pending', known: true };
    const last = plan.txs[plan.txs.length - 1];
    const finalized = BigInt(await this.call(() => this.connection.getBlockHeight('finalized')));
    const expired =
      plan.lastValidBlockHeight !== undefined
        ? finalized > BigInt(plan.lastValidBlockHeight)
        : !(await this.call(() => this.connection.isBlockhashValid(recentBlockhashOf(last.raw), { commitment: 'finalized' }))).value;
    if (!expired) return { status: 'pending', known: false };
    const history = await this.call(() => this.connection.getSignaturesForAddress(sourceOf(last.raw), { limit: 1000 }, 'finalized'));
    if (history.some((h) => h.signature === plan.txidOut)) return { status: 'pending', known: true };
    return { status: 'replaceable', reason: 'blockhash expired in finalized history before the transaction landed', observedAt: finalized };
  }

  async close(): Promise<void> {
    this.health.close();
    this.reader.close();
    // The web socket is opened lazily for subscriptions; close it so the process (and surfnet) can stop.
    const ws = (this.connection as unknown as { _rpcWebSocket?: { close(): void } })._rpcWebSocket;
    ws?.close();
  }

  private asset(ticker: string) {
    const a = ASSETS[ticker];
    if (!a || a.network !== this.network) throw new InvalidRequestError(`${ticker} is not an asset of ${this.network}`);
    if (a.type === 'token' && !this.opts.tokens[ticker]) throw new InvalidRequestError(`${ticker} has no configured mint`);
    return a;
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw classifySolError(e);
    }
  }
}
