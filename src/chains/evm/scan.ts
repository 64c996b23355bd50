import { getAddress, type Block, type JsonRpcProvider, type Log } from 'ethers';
import { NodeUnavailableError, type ObservedDeposit, type ScannedBlock } from '../adapter';
import { TRANSFER_TOPIC, parseTransferLog } from './erc20';
import { INTERNAL_INDEX_BASE, type InternalTransfer } from './internal-transfers';
import { nodeCall } from './node-call';
import type { CallTracer } from './trace';

export { nodeCall };

/**
 * A top-level ETH deposit's index: a Transfer log can be log 0 of a transaction that also carries value.
 * Ether sent by a contract (an internal call) is INTERNAL_INDEX_BASE + its ordinal (internal-transfers.ts).
 */
export const NATIVE_INDEX = -1;

/**
 * What the watcher reads of one EVM block: deposits of ETH (top-level, and sent by contracts where the
 * node serves call traces) and of the configured tokens, and its txids.
 */
export class BlockScanner {
  /** Whether the node answers eth_getBlockReceipts; unknown until the first block with value transfers. */
  private blockReceipts: boolean | undefined;

  constructor(
    private readonly network: string,
    private readonly provider: JsonRpcProvider,
    /** token contract (checksummed) → ticker */
    private readonly tokensByContract: ReadonlyMap<string, string>,
    private readonly tracer: CallTracer,
  ) {}

  /**
   * One block: its value transfers (with their receipts' status), the Transfer logs of configured tokens
   * and, unless `traces` is false (no address of the network is watched yet), the ether its contracts sent:
   * one call each, made together.
   */
  async scanBlock(height: bigint, opts: { traces?: boolean } = {}): Promise<ScannedBlock> {
    const block = await nodeCall(() => this.provider.getBlock(Number(height), true));
    if (!block?.hash) throw new NodeUnavailableError(`block ${height} not available`);
    const hash = block.hash;
    const txids = block.prefetchedTransactions.map((tx) => tx.hash);
    const withValue = block.prefetchedTransactions.filter((tx) => tx.to && tx.value > 0n);
    const [statuses, logs, internal] = await Promise.all([
      withValue.length ? this.receiptStatuses(block, withValue.map((tx) => tx.hash)) : new Map<string, number>(),
      this.tokensByContract.size
        ? nodeCall(() => this.provider.getLogs({ blockHash: hash, address: [...this.tokensByContract.keys()], topics: [TRANSFER_TOPIC] }))
        : ([] as Log[]),
      opts.traces === false ? ([] as InternalTransfer[]) : this.tracer.block(height, hash, txids),
    ]);
    const deposits: ObservedDeposit[] = [];
    for (const tx of withValue) {
      if (statuses.get(tx.hash) !== 1) continue; // a reverted call moved no value
      deposits.push({ ...this.deposit('eth', tx.hash, NATIVE_INDEX, tx.to!, tx.value, block), sender: getAddress(tx.from) });
    }
    for (const log of logs) {
      const t = parseTransferLog(log);
      const ticker = t && this.tokensByContract.get(getAddress(log.address));
      if (!t || !ticker || t.value === 0n) continue;
      deposits.push({ ...this.deposit(ticker, log.transactionHash, log.index, t.to, t.value, block), sender: getAddress(t.from) });
    }
    // The transaction's own frame is not among these: its value is the top-level deposit above.
    for (const t of internal) {
      deposits.push({ ...this.deposit('eth', t.txid, INTERNAL_INDEX_BASE + t.ordinal, t.to, t.value, block), sender: getAddress(t.from) });
    }
    return {
      height, hash, deposits, txids,
      nonces: block.prefetchedTransactions.map((tx) => ({ source: getAddress(tx.from), nonce: BigInt(tx.nonce) })),
    };
  }

  /** Receipt status per transaction: one eth_getBlockReceipts call, or per-transaction receipts where a node lacks it. */
  private async receiptStatuses(block: Block, txids: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (this.blockReceipts !== false) {
      try {
        const receipts = (await this.provider.send('eth_getBlockReceipts', [`0x${block.number.toString(16)}`])) as
          | { transactionHash: string; status: string; blockHash: string }[]
          | null;
        this.blockReceipts = true;
        for (const r of receipts ?? []) if (r.blockHash === block.hash) out.set(r.transactionHash, Number(BigInt(r.status)));
        return out;
      } catch (e) {
        if (this.blockReceipts === true || !/method|not (found|supported|available)|-32601/i.test(String((e as Error).message))) throw e;
        this.blockReceipts = false;
      }
    }
    for (const txid of txids) {
      const r = await nodeCall(() => this.provider.getTransactionReceipt(txid));
      if (r && r.blockHash === block.hash) out.set(txid, r.status ?? 0);
    }
    return out;
  }

  private deposit(ticker: string, txid: string, index: number, to: string, amount: bigint, block: Block): ObservedDeposit {
    return { network: this.network, ticker, txid, index, recipient: getAddress(to), amount, blockNumber: BigInt(block.number), blockHash: block.hash! };
  }
}
