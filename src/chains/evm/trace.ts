import { isError, type JsonRpcProvider } from 'ethers';
import { NodeUnavailableError } from '../adapter';
import { logger } from '../../observability/logger';
import { evmTracing } from '../../observability/metrics';
import {
  callTreeOfParity,
  groupParityByTransaction,
  transfersOfCallTree,
  type CallFrame,
  type InternalTransfer,
  type ParityTrace,
} from './internal-transfers';
import { nodeCall } from './node-call';

/**
 * Which call-trace API the node serves: geth's debug namespace with its callTracer (geth, erigon, reth,
 * nethermind, anvil), the Parity-style trace namespace (erigon, reth, nethermind, anvil), or none.
 */
export type TraceApi = 'debug' | 'trace' | 'none';

const CALL_TRACER = { tracer: 'callTracer' };

/**
 * JSON-RPC answers that say "this node does not serve the method" rather than "not now": method not found
 * (-32601), invalid request (-32600, what some providers answer for a method their plan excludes), invalid
 * params (-32602: a node that does not know the callTracer) and method not supported (-32004, EIP-1474).
 */
const NOT_SERVED_CODES = new Set([-32601, -32600, -32602, -32004]);

function notServed(e: unknown): boolean {
  if (isError(e, 'UNSUPPORTED_OPERATION')) return true;
  const code = isError(e, 'UNKNOWN_ERROR') ? (e.error as { code?: unknown } | undefined)?.code : undefined;
  return typeof code === 'number' && NOT_SERVED_CODES.has(code);
}

const hex = (n: bigint | number) => `0x${n.toString(16)}`;

/**
 * The node's call traces, read for the ether that contracts send to deposit addresses. The API is probed
 * once, at the watcher's start, and said once: a log line and gateway_evm_tracing{network}. Without
 * traces, top-level and token deposits are read as before. trace_block is asked first: a node that
 * serves both gives the same transfers either way, and anvil (the local chain) answers trace_block from
 * its recorded traces while its callTracer executes the block again, seconds of its CPU for a block of a
 * few hundred transfers (docs/decisions/0020-evm-trace-block-first.md).
 */
export class CallTracer {
  private api: TraceApi | undefined;

  constructor(
    private readonly network: string,
    private readonly provider: JsonRpcProvider,
  ) {}

  /**
   * The API this node serves, asked of it the first time (on block `height`, e.g. the head). A trace_block
   * refused in words this file does not know (a provider's plan) still lets the callTracer be asked; only
   * when neither answers, and one of them not as "not served", is there no verdict yet (asked again next time).
   */
  async probe(height: bigint): Promise<TraceApi> {
    if (this.api) return this.api;
    let failure: unknown;
    for (const api of ['trace', 'debug'] as const) {
      try {
        await this.request(api, 'block', hex(height));
        return this.settle(api);
      } catch (e) {
        if (!notServed(e)) failure ??= e;
      }
    }
    if (failure !== undefined) throw this.unavailable(failure);
    return this.settle('none');
  }

  /**
   * The internal transfers of one block, every transaction's. `txids`: the block's transactions in order,
   * to check that the traces are this block's (a trace by number can read a block a reorg put there since).
   */
  async block(height: bigint, blockHash: string, txids: string[]): Promise<InternalTransfer[]> {
    const api = await this.probe(height);
    if (api === 'none' || txids.length === 0) return [];
    let answer: unknown;
    try {
      answer = await this.request(api, 'block', hex(height));
    } catch (e) {
      if (!notServed(e)) throw this.unavailable(e);
      this.settle('none'); // a node swapped behind the same URL: said once, detection goes on without
      return [];
    }
    return api === 'debug' ? this.fromDebugBlock(answer, txids) : this.fromParityBlock(answer, blockHash, txids);
  }

  /** One transaction's internal transfers (a deposit's transaction mined again elsewhere after a reorg). */
  async transaction(txid: string): Promise<InternalTransfer[]> {
    const api = this.api ?? (await this.probe(BigInt(await nodeCall(() => this.provider.getBlockNumber()))));
    // Without traces now, the transfer cannot be read: no verdict either way.
    if (api === 'none') throw new NodeUnavailableError(`${this.network}: no call traces to read ${txid} with`);
    const answer = await nodeCall(() => this.request(api, 'transaction', txid));
    if (api === 'debug') return transfersOfCallTree(txid, answer as CallFrame);
    const tree = callTreeOfParity((answer as ParityTrace[] | null) ?? []);
    if (!tree) throw new NodeUnavailableError(`${this.network}: traces of ${txid} are not one call tree`);
    return transfersOfCallTree(txid, tree);
  }

  private request(api: 'debug' | 'trace', of: 'block' | 'transaction', id: string): Promise<unknown> {
    if (api === 'debug') {
      return this.provider.send(of === 'block' ? 'debug_traceBlockByNumber' : 'debug_traceTransaction', [id, CALL_TRACER]);
    }
    return this.provider.send(of === 'block' ? 'trace_block' : 'trace_transaction', [id]);
  }

  private fromDebugBlock(answer: unknown, txids: string[]): InternalTransfer[] {
    const list = answer as Array<{ txHash?: string; result?: CallFrame; error?: string }> | null;
    if (!Array.isArray(list) || list.length !== txids.length) throw new NodeUnavailableError(`${this.network}: block traces do not match the block's ${txids.length} transactions`);
    const out: InternalTransfer[] = [];
    list.forEach((t, i) => {
      if ((t.txHash && t.txHash.toLowerCase() !== txids[i].toLowerCase()) || !t.result) {
        throw new NodeUnavailableError(`${this.network}: no call trace of ${txids[i]} in its block's traces`);
      }
      out.push(...transfersOfCallTree(txids[i], t.result));
    });
    return out;
  }

  private fromParityBlock(answer: unknown, blockHash: string, txids: string[]): InternalTransfer[] {
    const list = (answer as Array<ParityTrace & { blockHash?: string }> | null) ?? [];
    if (list.some((t) => t.blockHash && t.blockHash.toLowerCase() !== blockHash.toLowerCase())) {
      throw new NodeUnavailableError(`${this.network}: block traces are of another block than ${blockHash}`);
    }
    const byTx = groupParityByTransaction(list);
    const out: InternalTransfer[] = [];
    for (const txid of txids) {
      const traces = byTx.get(txid) ?? byTx.get(txid.toLowerCase());
      const tree = traces && callTreeOfParity(traces);
      if (!tree) throw new NodeUnavailableError(`${this.network}: no call tree of ${txid} in its block's traces`);
      out.push(...transfersOfCallTree(txid, tree));
    }
    return out;
  }

  private settle(api: TraceApi): TraceApi {
    if (this.api === api) return api;
    this.api = api;
    evmTracing.set({ network: this.network }, api === 'none' ? 0 : 1);
    if (api === 'none') {
      logger.warn(
        { network: this.network },
        'the node serves no call traces (debug_traceBlockByNumber, trace_block): ether a contract sends to a deposit address is not seen; top-level and token deposits are',
      );
    } else {
      logger.info({ network: this.network, api }, 'call traces read: ether a contract sends to a deposit address is a deposit');
    }
    return api;
  }

  private unavailable(e: unknown): unknown {
    return e instanceof NodeUnavailableError ? e : new NodeUnavailableError(`${this.network}: call trace not answered`, { cause: e });
  }
}
