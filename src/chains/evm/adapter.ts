import { getAddress, Network, type Wallet } from 'ethers';
import { ASSETS, type Priority } from '../../domain/assets';
import type { HdSeed } from '../keys';
import { DEFAULT_RPC_BATCH, type ChainMode } from '../config';
import { deriveEvmWallet, validateAddress } from '../addresses';
import { evmGasTankKey } from '../sponsor';
import {
  InvalidRequestError,
  type BroadcastOptions,
  NodeUnavailableError,
  type ChainAdapter,
  type Confirmations,
  type Cursor,
  type ForwardContext,
  type ForwardCostEstimate,
  type ForwardPlan,
  type ForwardRequest,
  type ForwardStatus,
  type ObservedDeposit,
  type ScanBatch,
  type ScanScope,
  type ScannedBlock,
  type SweepRequest,
} from '../adapter';
import { ETH_TRANSFER_GAS, TOKEN_TRANSFER_GAS_FALLBACK, eip1559Fees } from './fees';
import { prepareEthForward, prepareTokenForward } from './forward';
import { KeyedMutex } from './nonces';
import { ensureTopup } from './topup';
import { depositConfirmations } from './confirmations';
import { BlockScanner, NATIVE_INDEX, nodeCall } from './scan';
import { CallTracer } from './trace';
import { nativeWallet } from './signing-key';
import { EvmRpcProvider } from './provider';
import { forwardStatusOf, sendRaw, waitMined } from './broadcast';
import { evmBalance, prepareEthSweep, prepareTokenSweep } from './sweep';
import { EndpointPool } from '../endpoints';
import { readAhead } from '../ahead';
import { startEndpointHealth, type EndpointHealth, type HealthBounds } from '../endpoint-health';

export { NATIVE_INDEX };

export interface EvmAdapterOptions {
  network: string;
  mode: ChainMode;
  rpcUrl: string;
  /** The most JSON-RPC calls in one HTTP request (default DEFAULT_RPC_BATCH; 1: each alone). */
  rpcBatch?: number;
  chainId: bigint;
  seed: HdSeed;
  /** ticker → token contract of the configured ERC-20 assets. */
  tokens: Record<string, string>;
  /** How far back to restart when the cursor's block was reorganised away. */
  rewindDepth?: number;
  /** Bound on waiting for a gas top-up to be mined before the token transfer is sent. */
  topupTimeoutMs?: number;
  /** Blocks after which a block is final here: a rival's receipt must be this deep before a plan is replaced. */
  finalityDepth?: number;
  /** Bounds of the endpoints' health checks (src/chains/endpoint-health.ts); per-network defaults. */
  endpointHealth?: Partial<HealthBounds>;
  /** A lock across processes (Database.withLock); without one, within this process only. */
  lock?: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
}

/** Address_in wallets an adapter keeps (EvmAdapter.wallet). */
const WALLETS_KEPT = 4096;

/** Blocks a scan reads ahead of the one it hands on: a backlog's blocks (their traces above all) are asked of the node together. */
const SCAN_IN_FLIGHT = 4;

export class EvmAdapter implements ChainAdapter {
  readonly network: string;
  readonly provider: EvmRpcProvider;
  private readonly credentials: readonly string[];
  private readonly tokensByContract = new Map<string, string>();
  private readonly locks = new KeyedMutex();
  private readonly scanner: BlockScanner;
  private readonly tracer: CallTracer;
  private tank: Wallet | undefined;
  private readonly wallets = new Map<bigint, Wallet>();
  private readonly health: EndpointHealth;

  constructor(private readonly opts: EvmAdapterOptions) {
    this.network = opts.network;
    const net = Network.from(opts.chainId);
    // A static network (no chainId probe per call) and no request cache: the cache answers stale heads.
    // Calls made in the same turn of the event loop go as one JSON-RPC batch (ethers' batching, no stall
    // beyond that turn): less CPU per call here, and the node parses one request instead of many
    // (docs/decisions/0008-evm-rpc-batching.md). Each call keeps its own answer or error; a request that
    // fails fails the calls in it, which their callers retry as before.
    const pool = new EndpointPool(opts.network, opts.rpcUrl);
    this.credentials = pool.credentials;
    this.provider = new EvmRpcProvider(pool, net, {
      staticNetwork: net,
      cacheTimeout: -1,
      batchMaxCount: opts.rpcBatch ?? DEFAULT_RPC_BATCH,
      batchStallTime: 0,
    });
    this.health = startEndpointHealth(pool, {
      family: 'evm',
      bounds: opts.endpointHealth,
      sponsor: { role: 'gas_tank', balance: () => this.provider.getBalance(this.gasTank().address) },
    });
    for (const [ticker, contract] of Object.entries(opts.tokens)) this.tokensByContract.set(getAddress(contract), ticker);
    this.tracer = new CallTracer(this.network, this.provider);
    this.scanner = new BlockScanner(this.network, this.provider, this.tokensByContract, this.tracer);
  }

  validateAddress(address: string): boolean {
    return validateAddress(this.network, this.opts.mode, address);
  }

  deriveAddressIn(index: bigint): string {
    return this.wallet(index).address;
  }

  /**
   * The wallet of address_in `index`, kept for the next forward from the same address: a key derivation and
   * its public key each time otherwise. The keys are the seed's, already in this process; the map is
   * bounded and starts over when full.
   */
  wallet(index: bigint): Wallet {
    let w = this.wallets.get(index);
    if (!w) {
      if (this.wallets.size >= WALLETS_KEPT) this.wallets.clear();
      w = deriveEvmWallet(this.opts.seed, this.network, this.opts.mode, index).wallet.connect(this.provider);
      this.wallets.set(index, w);
    }
    return w;
  }

  keepSigningKey(index: bigint): void {
    this.wallet(index);
  }

  /** The gas tank's wallet, made once (a key derivation and a public key each time otherwise). */
  gasTank(): Wallet {
    this.tank ??= nativeWallet(evmGasTankKey(this.opts.seed), this.provider);
    return this.tank;
  }

  async head(): Promise<Cursor & { hash: string }> {
    const b = await this.call(() => this.provider.getBlock('latest'));
    if (!b?.hash) throw new NodeUnavailableError('node returned no latest block');
    return { height: BigInt(b.number), hash: b.hash };
  }

  async scan(cursor: Cursor | null, maxBlocks = 50, opts: ScanScope = {}): Promise<ScanBatch> {
    const head = await this.head();
    // Whether the node serves call traces is found at the watcher's first pass, and said then.
    await this.tracer.probe(head.height);
    if (!cursor) return { blocks: [], cursor: head, rewound: false };
    let from = cursor.height;
    let rewound = false;
    if (cursor.hash !== null) {
      // A cursor above the head means the chain got shorter: a reorg as much as a changed hash.
      const at = cursor.height <= head.height ? await this.call(() => this.provider.getBlock(Number(cursor.height))) : null;
      if (!at || at.hash !== cursor.hash) {
        rewound = true;
        from = cursor.height - BigInt(this.opts.rewindDepth ?? 12);
        if (from < -1n) from = -1n;
      }
    }
    const heights: bigint[] = [];
    for (let h = from + 1n; h <= head.height && heights.length < maxBlocks; h++) heights.push(h);
    const traces = opts.watched !== false;
    const blocks: ScannedBlock[] = [];
    for await (const [, scanned] of readAhead(heights, SCAN_IN_FLIGHT, (h) => this.scanBlock(h, { traces }))) blocks.push(scanned);
    const last = blocks[blocks.length - 1];
    const next: Cursor = last ? { height: last.height, hash: last.hash } : rewound ? { height: from, hash: null } : cursor;
    return { blocks, cursor: next, rewound };
  }

  async blockTime(height: bigint): Promise<number | null> {
    const block = await this.call(() => this.provider.getBlock(Number(height)));
    return block ? block.timestamp : null;
  }

  /** One block: its value transfers, the Transfer logs of configured tokens, and the ether contracts sent (BlockScanner). */
  scanBlock(height: bigint, opts: { traces?: boolean } = {}): Promise<ScannedBlock> {
    return this.scanner.scanBlock(height, opts);
  }

  async confirmations(d: ObservedDeposit): Promise<Confirmations> {
    return depositConfirmations(this.provider, this.tokensByContract, this.tracer, d);
  }

  async estimateForwardCost(ticker: string, priority: Priority, opts: { fresh?: boolean } = {}): Promise<ForwardCostEstimate> {
    const fees = await this.call(() => eip1559Fees(this.provider, priority, opts));
    if (this.asset(ticker).type === 'native') return { networkFee: ETH_TRANSFER_GAS * fees.maxFeePerGas, sponsorCost: 0n };
    return { networkFee: 0n, sponsorCost: (TOKEN_TRANSFER_GAS_FALLBACK + ETH_TRANSFER_GAS) * fees.maxFeePerGas };
  }

  async prepareForward(req: ForwardRequest): Promise<ForwardPlan> {
    if (!this.validateAddress(req.addressOut)) throw new InvalidRequestError(`not an address: ${req.addressOut}`);
    const asset = this.asset(req.deposit.ticker);
    const source = this.wallet(req.derivationIndex);
    if (source.address !== req.deposit.recipient) throw new InvalidRequestError('derivation index does not own the deposit address');
    const ctx = { provider: this.provider, chainId: this.opts.chainId, network: this.network };
    if (asset.type === 'native') return this.locks.run(source.address, () => prepareEthForward(ctx, source, req));
    const contract = this.opts.tokens[asset.ticker];
    const tank = this.gasTank();
    return this.locks.run(tank.address, () => this.locks.run(source.address, () => prepareTokenForward(ctx, source, tank, contract, req, asset)));
  }

  async balanceOf(address: string, ticker: string, seenUpTo?: bigint): Promise<bigint> {
    const a = this.asset(ticker);
    const contract = a.type === 'native' ? undefined : this.opts.tokens[ticker];
    const now = await this.call(() => evmBalance(this.provider, address, contract));
    if (seenUpTo === undefined) return now;
    // What arrived since that block is not counted, and what left since (a forward, a sweep) is gone.
    const then = await this.call(() => evmBalance(this.provider, address, contract, seenUpTo));
    return then < now ? then : now;
  }

  async prepareSweep(req: SweepRequest): Promise<ForwardPlan> {
    if (!this.validateAddress(req.destination)) throw new InvalidRequestError(`not an address: ${req.destination}`);
    const a = this.asset(req.ticker);
    const source = this.wallet(req.derivationIndex);
    if (source.address !== req.source) throw new InvalidRequestError('derivation index does not own the swept address');
    const ctx = { provider: this.provider, chainId: this.opts.chainId, network: this.network };
    if (a.type === 'native') return this.locks.run(source.address, () => this.call(() => prepareEthSweep(ctx, source, req)));
    const tank = this.gasTank();
    return this.locks.run(tank.address, () => this.locks.run(source.address, () => this.call(() => prepareTokenSweep(ctx, source, tank, this.opts.tokens[a.ticker], req))));
  }

  async broadcast(plan: ForwardPlan, opts: BroadcastOptions = {}): Promise<void> {
    const tank = this.gasTank();
    const lockTank = <T>(fn: () => Promise<T>) =>
      this.opts.lock ? this.opts.lock(`evm-tank:${this.network}`, fn) : this.locks.run(tank.address, fn);
    for (const tx of plan.txs) {
      if (tx.role === 'gas-topup') {
        const io = { provider: this.provider, tank, lockTank, onPlanChange: opts.onPlanChange, send: (raw: string, id: string) => this.send(raw, id) };
        const wait = await this.call(() => ensureTopup(io, plan));
        if (!wait) continue;
        // The token transfer needs the top-up's ether on chain first; the node refuses it before.
        if (opts.waitForSponsor === false) {
          if ((await this.call(() => this.provider.getTransactionReceipt(wait)))?.status !== 1) return;
        } else {
          await this.waitMined(wait, this.opts.topupTimeoutMs ?? 120_000);
        }
        continue;
      }
      opts.beforeSend?.();
      const mined = await this.call(() => this.provider.getTransactionReceipt(tx.txid));
      if (!mined) await this.send(tx.raw, tx.txid);
    }
  }

  private send(raw: string, txid: string): Promise<void> {
    return sendRaw(this.provider, raw, txid, this.credentials);
  }

  private waitMined(txid: string, timeoutMs: number): Promise<void> {
    return waitMined(this.provider, txid, timeoutMs);
  }

  /** The forward's fate on chain: src/chains/evm/broadcast.ts (forwardStatusOf). */
  forwardStatus(plan: ForwardPlan, ctx: ForwardContext = {}): Promise<ForwardStatus> {
    return forwardStatusOf(this.provider, plan, ctx, this.opts.finalityDepth ?? 12);
  }

  async close(): Promise<void> {
    this.health.close();
    this.provider.destroy();
  }

  private asset(ticker: string) {
    const a = ASSETS[ticker];
    if (!a || a.network !== this.network) throw new InvalidRequestError(`${ticker} is not an asset of ${this.network}`);
    if (a.type === 'token' && !this.opts.tokens[ticker]) throw new InvalidRequestError(`${ticker} has no configured contract`);
    return a;
  }

  private call<T>(fn: () => Promise<T>): Promise<T> {
    return nodeCall(fn);
  }
}
