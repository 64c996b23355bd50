import { NodeUnavailableError } from '../adapter';
import { EndpointPool, type Endpoint } from '../endpoints';
import { SolBlockThread } from './block-thread';
import { HttpStatusError, RpcTransportError, networkCode } from './rpc';
import { postJson } from '../http-post';
import { watchedBlock } from './scan';
import { readAhead } from '../ahead';
import { holdsBlock } from './block-bytes';

/**
 * The watcher's reading of Solana blocks as plain JSON-RPC (DESIGN 13): one fetch and one JSON.parse per
 * block, no client library in between. A mainnet block as web3.js's getParsedBlock reads it (full
 * transactions, a validation object per field, a PublicKey per account key) costs seconds of CPU;
 * `transactionDetails: 'accounts'` carries everything detection reads (account keys with their signer
 * flag, loaded addresses included; balances and token balances with owner and mint) at less than half the
 * size, and parsed as plain objects it costs a fraction of the slot time.
 */

/** A token balance as the node reports it (`owner` and `programId` are absent on old ledgers). */
export interface RawTokenBalance {
  accountIndex: number;
  mint: string;
  owner?: string;
  programId?: string;
  uiTokenAmount: { amount: string };
}

export interface RawTx {
  meta: {
    err: unknown;
    preBalances: number[];
    postBalances: number[];
    preTokenBalances?: RawTokenBalance[] | null;
    postTokenBalances?: RawTokenBalance[] | null;
  } | null;
  transaction: { accountKeys: Array<{ pubkey: string; signer: boolean }>; signatures: string[] };
}

export interface RawBlock {
  blockhash: string;
  transactions: RawTx[];
}

/** A JSON-RPC error answer that is not the node being unavailable: its code classifies it. */
export class SolRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'SolRpcError';
  }
}

/** The RPC limit on one getBlocks range (Agave's MAX_GET_CONFIRMED_BLOCKS_RANGE). */
export const MAX_BLOCKS_RANGE = 500_000;

// Answers that say the node cannot serve the request now (behind, unhealthy, block not yet stored):
// another try later, or another node, succeeds.
const UNAVAILABLE_CODES = new Set([-32004, -32005, -32014, -32016]);
// The slot has no block (skipped, or outside the node's long-term storage).
const NO_BLOCK_CODES = new Set([-32007, -32009]);

/** getBlock's parameters for what detection reads of a block. */
function blockParams(slot: number): unknown[] {
  return [slot, { commitment: 'confirmed', encoding: 'json', transactionDetails: 'accounts', maxSupportedTransactionVersion: 0, rewards: false }];
}

/** A JSON-RPC answer's result, or its error classified. */
function answer<T>(method: string, text: string): T {
  let body: { result?: T; error?: { code: number; message: string } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch (e) {
    throw new NodeUnavailableError(`${method}: not JSON`, { cause: e });
  }
  if (body.error) {
    const { code, message } = body.error;
    if (UNAVAILABLE_CODES.has(code)) throw new NodeUnavailableError(`${method}: ${message}`);
    throw new SolRpcError(code, `${method}: ${message}`);
  }
  return body.result as T;
}

export class SolBlockReader {
  private readonly pool: EndpointPool;
  private nextId = 1;

  /**
   * `inFlight`: block requests sent ahead of the one being parsed, so the node works while this process
   * parses. `timeoutMs`: a node that holds a request longer is unavailable for it (a stuck node would
   * otherwise hold the watcher's pass for ever). `thread`: where watchedBlock fetches and scans (one is
   * started on first use when none is given).
   */
  constructor(
    endpoints: string | EndpointPool,
    private readonly inFlight = 4,
    private readonly timeoutMs = 30_000,
    private thread?: SolBlockThread,
  ) {
    this.pool = typeof endpoints === 'string' ? new EndpointPool('solana', endpoints) : endpoints;
  }

  async rpc<T>(method: string, params: unknown[]): Promise<T> {
    return answer<T>(method, (await this.post(method, params)).toString('utf8'));
  }

  /** The answer's bytes (no text decoding), after its HTTP status was checked. */
  private post(method: string, params: unknown[]): Promise<Buffer> {
    return this.send(method, params, (ep, body) => postJson(ep.url, ep.headers, body, this.timeoutMs)).then((a) => a.bytes);
  }

  /** A request through `transport` to a healthy endpoint, its answer's HTTP status checked and failures classified. */
  private async send<A extends { status: number }>(method: string, params: unknown[], transport: (ep: Endpoint, body: string) => Promise<A>): Promise<A> {
    try {
      const body = JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params });
      // A healthy endpoint of the network (the next one when this one cannot be reached), its own credentials.
      const a = await this.pool.read((ep) => transport(ep, body));
      if (a.status === 429 || a.status >= 500) throw new HttpStatusError(a.status);
      if (a.status < 200 || a.status > 299) throw new SolRpcError(a.status, `${method}: HTTP ${a.status}`);
      return a;
    } catch (e) {
      if (e instanceof NodeUnavailableError || e instanceof SolRpcError) throw e;
      throw new RpcTransportError(networkCode(e), e);
    }
  }

  slot(): Promise<number> {
    return this.rpc<number>('getSlot', [{ commitment: 'confirmed' }]);
  }

  /** The slot's blockhash, or null when the slot has no block. */
  async blockhash(slot: number): Promise<string | null> {
    const b = await this.orNone(this.rpc<{ blockhash: string } | null>('getBlock', [slot, { commitment: 'confirmed', transactionDetails: 'none', rewards: false, maxSupportedTransactionVersion: 0 }]));
    return b?.blockhash ?? null;
  }

  /** The block with what detection reads, or null when the slot has no block. */
  async block(slot: number): Promise<RawBlock | null> {
    const b = await this.blockBytes(slot);
    return b && (JSON.parse(b.toString('utf8')) as { result: RawBlock }).result;
  }

  /** The same block's answer unparsed (./block-bytes.ts reads it), or null when the slot has no block. */
  blockBytes(slot: number): Promise<Buffer | null> {
    return this.orNone(
      this.post('getBlock', blockParams(slot)).then((bytes) =>
        // No block object: read as any other answer.
        holdsBlock(bytes) ? bytes : answer<null>('getBlock', bytes.toString('utf8')),
      ),
    );
  }

  /**
   * The block with only the transactions that name one of `watched` (a list that only grows), fetched and
   * scanned on the block thread (./block-thread.ts), or null when the slot has no block.
   */
  watchedBlock(slot: number, watched: readonly string[]): Promise<RawBlock | null> {
    const thread = (this.thread ??= new SolBlockThread());
    return this.orNone(
      this.send('getBlock', blockParams(slot), (ep, body) => thread.read(ep, body, this.timeoutMs, watched)).then((a) =>
        'text' in a ? answer<null>('getBlock', a.text) : watchedBlock(a),
      ),
    );
  }

  /** Ends the block thread, if one was started. */
  close(): void {
    this.thread?.close();
  }

  /**
   * Up to `max` slots that have a block in (after, end], read in pages no longer than the RPC's range limit:
   * a cursor any distance behind (an outage of days) resumes. A page starts at twice `max` slots (few are
   * skipped) and doubles while it finds too few, so a long stretch without blocks costs few calls.
   */
  async slotsAfter(after: number, end: number, max: number): Promise<number[]> {
    const slots: number[] = [];
    let from = after + 1;
    let span = Math.min(MAX_BLOCKS_RANGE, Math.max(1, 2 * max));
    while (from <= end && slots.length < max) {
      const to = Math.min(end, from + span - 1);
      slots.push(...(await this.rpc<number[]>('getBlocks', [from, to, { commitment: 'confirmed' }])));
      from = to + 1;
      span = Math.min(MAX_BLOCKS_RANGE, span * 2);
    }
    return slots.slice(0, max);
  }

  /** The slots' blocks in order (parsed, or as `read` reads them), `inFlight` requests ahead of the one returned. */
  blocks(slots: number[]): AsyncGenerator<[number, RawBlock | null]>;
  blocks<B>(slots: number[], read: (slot: number) => Promise<B | null>): AsyncGenerator<[number, B | null]>;
  blocks<B>(slots: number[], read?: (slot: number) => Promise<B | null>): AsyncGenerator<[number, B | null]> {
    return readAhead(slots, this.inFlight, read ?? ((slot: number) => this.block(slot) as Promise<B | null>));
  }

  private async orNone<T>(p: Promise<T | null>): Promise<T | null> {
    try {
      return await p;
    } catch (e) {
      if (e instanceof SolRpcError && NO_BLOCK_CODES.has(e.code)) return null;
      throw e;
    }
  }
}
