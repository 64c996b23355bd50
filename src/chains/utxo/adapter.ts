import { ASSETS, NETWORKS, type Priority } from '../../domain/assets';
import {
  BroadcastRejectedError,
  NodeUnavailableError,
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
} from '../adapter';
import { canonicalUtxoAddress, deriveUtxoKey, validateAddress } from '../addresses';
import type { ChainMode } from '../config';
import type { HdSeed } from '../keys';
import { DialectNode, type RpcBlock } from './dialect';
import { feeRate, forwardFeeEstimate, forwardOutpoint, nodePolicy, prepareUtxoForward } from './forward';
import { isPolicyRefusal, worstPayoutDust } from './policy';
import { utxoNetwork } from './networks';
import { BitcoinRpc, RpcError, toSats } from './rpc';
import { EndpointPool } from '../endpoints';
import { startEndpointHealth, type EndpointHealth, type HealthBounds } from '../endpoint-health';

export interface UtxoAdapterOptions {
  network: string;
  mode: ChainMode;
  rpcUrl: string;
  seed: HdSeed;
  /** sat/vB when the node cannot estimate (regtest, a fresh node). */
  fallbackFeeRate?: bigint;
  rewindDepth?: number;
  /** Bounds of the endpoints' health checks (src/chains/endpoint-health.ts); per-network defaults. */
  endpointHealth?: Partial<HealthBounds>;
}

export class UtxoAdapter implements ChainAdapter {
  readonly network: string;
  readonly rpc: BitcoinRpc;
  /** The node's RPC dialect (Core family or btcd/bchd), found on first use: src/chains/utxo/dialect.ts. */
  readonly node: DialectNode;
  private readonly ticker: string;
  private readonly cashAddr: boolean;
  private readonly health: EndpointHealth;

  constructor(private readonly opts: UtxoAdapterOptions) {
    this.network = opts.network;
    const pool = new EndpointPool(opts.network, opts.rpcUrl);
    this.rpc = new BitcoinRpc(pool);
    this.health = startEndpointHealth(pool, { family: 'utxo', bounds: opts.endpointHealth });
    this.node = new DialectNode(this.rpc);
    this.ticker = NETWORKS[opts.network].nativeTicker;
    this.cashAddr = utxoNetwork(opts.network, opts.mode).cashAddrPrefix !== undefined;
  }

  validateAddress(address: string): boolean {
    return validateAddress(this.network, this.opts.mode, address);
  }

  deriveAddressIn(index: bigint): string {
    return deriveUtxoKey(this.opts.seed, this.network, this.opts.mode, index).address;
  }

  async head(): Promise<Cursor & { hash: string }> {
    const height = await this.rpc.call<number>('getblockcount');
    const hash = await this.rpc.call<string>('getblockhash', [height]);
    return { height: BigInt(height), hash };
  }

  async scan(cursor: Cursor | null, maxBlocks = 20): Promise<ScanBatch> {
    // A pass with nothing new (most passes: a block comes every few minutes) costs one call. The cursor at
    // the node's best block is on the active chain, so there is no reorg to look for either.
    if (cursor?.hash && (await this.rpc.call<string>('getbestblockhash')) === cursor.hash) return { blocks: [], cursor, rewound: false };
    const head = await this.head();
    if (!cursor) return { blocks: [], cursor: head, rewound: false };
    let from = cursor.height;
    let rewound = false;
    // A cursor above the head means the chain got shorter: a reorg as much as a changed hash.
    if (cursor.hash !== null && (cursor.height > head.height || (await this.hashAt(cursor.height)) !== cursor.hash)) {
      rewound = true;
      from = cursor.height - BigInt(this.opts.rewindDepth ?? 6);
      if (from < -1n) from = -1n;
    }
    const blocks: ScannedBlock[] = [];
    let next: Cursor = rewound ? { height: from, hash: null } : cursor;
    for (let h = from + 1n; h <= head.height && blocks.length < maxBlocks; h++) {
      const hash = await this.rpc.call<string>('getblockhash', [Number(h)]);
      const block = await this.node.block(hash);
      const outpoints = block.tx.flatMap((t) => t.vin.flatMap((i) => (i.txid !== undefined && i.vout !== undefined ? [{ txid: i.txid, vout: i.vout }] : [])));
      blocks.push({ height: h, hash, deposits: this.depositsOf(block), txids: block.tx.map((t) => t.txid), outpoints });
      next = { height: h, hash };
    }
    return { blocks, cursor: next, rewound };
  }

  async blockTime(height: bigint): Promise<number | null> {
    const hash = await this.hashAt(height);
    return hash === null ? null : (await this.rpc.call<{ time: number }>('getblockheader', [hash, true])).time;
  }

  async oldestReadable(): Promise<bigint> {
    const info = await this.rpc.call<{ pruned?: boolean; pruneheight?: number }>('getblockchaininfo');
    return info.pruned && info.pruneheight !== undefined ? BigInt(info.pruneheight) : 0n;
  }

  private async hashAt(height: bigint): Promise<string | null> {
    try {
      return await this.rpc.call<string>('getblockhash', [Number(height)]);
    } catch (e) {
      if (e instanceof RpcError) return null;
      throw e;
    }
  }

  private depositsOf(block: RpcBlock): ObservedDeposit[] {
    const out: ObservedDeposit[] = [];
    for (const tx of block.tx) {
      // Coinbase outputs cannot be spent for 100 blocks; a payment gateway does not take them.
      if (tx.vin.some((i) => i.coinbase !== undefined)) continue;
      for (const v of tx.vout) {
        const address = this.canonical(v.scriptPubKey.address ?? (v.scriptPubKey.addresses?.length === 1 ? v.scriptPubKey.addresses[0] : undefined));
        const amount = toSats(v.value);
        if (!address || amount === 0n) continue;
        out.push({
          network: this.network,
          ticker: this.ticker,
          txid: tx.txid,
          index: v.n,
          recipient: address,
          amount,
          blockNumber: BigInt(block.height),
          blockHash: block.hash,
        });
      }
    }
    return out;
  }

  /** The spelling address_in has: bchd prints a CashAddr without its prefix. Other coins' nodes print it already. */
  private canonical(address: string | undefined): string | undefined {
    if (!address || !this.cashAddr) return address;
    try {
      return canonicalUtxoAddress(utxoNetwork(this.network, this.opts.mode), address);
    } catch {
      return address;
    }
  }

  async confirmations(d: ObservedDeposit): Promise<Confirmations> {
    const height = await this.rpc.call<number>('getblockcount');
    try {
      const header = await this.node.header(d.blockHash);
      // Bitcoin Core reports -1 for a block that is known but not on the active chain.
      if (header.confirmations >= 1) return { status: 'confirmed', confirmations: header.confirmations };
    } catch (e) {
      if (!(e instanceof RpcError && e.code === -5)) throw e;
      // A node that does not know the block and has not reached its height is behind, not reorganised.
      if (height < Number(d.blockNumber)) throw new NodeUnavailableError(`node at ${height} has not reached block ${d.blockNumber}`);
    }
    return this.reincluded(d, BigInt(height));
  }

  /** The orphaned deposit's transaction mined again elsewhere (needs -txindex to be found); else a reorg reading. */
  private async reincluded(d: ObservedDeposit, height: bigint): Promise<Confirmations> {
    try {
      const tx = await this.node.txInfo(d.txid);
      if (tx.blockhash && tx.confirmations && tx.confirmations >= 1) {
        const header = await this.node.header(tx.blockhash);
        if (header.confirmations >= 1) {
          return { status: 'confirmed', confirmations: header.confirmations, block: { number: BigInt(header.height), hash: tx.blockhash } };
        }
      }
    } catch (e) {
      if (!(e instanceof RpcError)) throw e;
    }
    return { status: 'reorged', confirmations: 0, observedAt: height };
  }

  /**
   * The forward as it is signed: payout and commission outputs (a commission below dust goes to the miner,
   * for less than that second output would cost), at the node's rate and relay minimum; payoutFloor is the
   * node's dust threshold of any address_out (P2PKH, the largest standard one).
   */
  async estimateForwardCost(ticker: string, priority: Priority): Promise<ForwardCostEstimate> {
    this.assertTicker(ticker);
    const net = utxoNetwork(this.network, this.opts.mode);
    const policy = await nodePolicy(this.node, net.coin);
    const rate = await feeRate(this.node, priority, policy, this.opts.fallbackFeeRate);
    return { networkFee: forwardFeeEstimate(net.coin, net.segwit, rate, 2), sponsorCost: 0n, payoutFloor: worstPayoutDust(policy.dust) };
  }

  async prepareForward(req: ForwardRequest): Promise<ForwardPlan> {
    this.assertTicker(req.deposit.ticker);
    if (!this.validateAddress(req.addressOut)) throw new InvalidRequestError(`not a ${this.network} address: ${req.addressOut}`);
    const key = deriveUtxoKey(this.opts.seed, this.network, this.opts.mode, req.derivationIndex);
    if (key.address !== req.deposit.recipient) throw new InvalidRequestError('derivation index does not own the deposit address');
    return prepareUtxoForward({ node: this.node, network: this.network, key, fallbackFeeRate: this.opts.fallbackFeeRate }, req);
  }

  async broadcast(plan: ForwardPlan): Promise<void> {
    for (const tx of plan.txs) {
      try {
        await this.rpc.call<string>('sendrawtransaction', [tx.raw]);
      } catch (e) {
        if (!(e instanceof RpcError)) throw e;
        if (await this.node.alreadyKnown(e.message)) continue;
        throw new BroadcastRejectedError(`${tx.txid} rejected: ${e.message}`, { cause: e });
      }
    }
  }

  async forwardStatus(plan: ForwardPlan): Promise<ForwardStatus> {
    try {
      const tx = await this.node.txInfo(plan.txidOut);
      if (!tx.blockhash || !tx.confirmations) return { status: 'pending', known: true };
      const header = await this.node.header(tx.blockhash);
      if (header.confirmations < 1) return { status: 'pending', known: true };
      return { status: 'confirmed', blockNumber: BigInt(header.height), blockHash: tx.blockhash };
    } catch (e) {
      if (e instanceof RpcError && e.code === -5) return this.unheld(plan);
      throw e;
    }
  }

  /**
   * A forward the node does not hold. Its bytes are re-sent (pending, not known) unless the node refuses
   * them for its relay policy (fee or dust) while the deposit outpoint they spend is unspent, in its
   * mempool too: then they cannot land through this node and are replaceable. A new plan spends the same
   * outpoint, so at most one of the two can ever be mined; the workflow acts only on a second reading at
   * a higher head (ForwardStatus).
   */
  private async unheld(plan: ForwardPlan): Promise<ForwardStatus> {
    const raw = plan.txs[plan.txs.length - 1].raw;
    const outpoint = forwardOutpoint(utxoNetwork(this.network, this.opts.mode), raw);
    if (!(await this.node.unspent(outpoint.txid, outpoint.vout))) return { status: 'pending', known: false };
    const test = await this.node.testAccept(raw);
    if (!test || test.allowed || test.reason === undefined || !isPolicyRefusal(test.reason)) return { status: 'pending', known: false };
    const head = await this.rpc.call<number>('getblockcount');
    return { status: 'replaceable', reason: `refused by the node's relay policy (${test.reason}); the deposit is unspent`, observedAt: BigInt(head) };
  }

  async close(): Promise<void> {
    this.health.close();
  }

  private assertTicker(ticker: string): void {
    if (ticker !== this.ticker || !ASSETS[ticker]) throw new InvalidRequestError(`${ticker} is not the asset of ${this.network}`);
  }
}
