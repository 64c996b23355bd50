/**
 * Ether moved by internal calls (a contract paying an address: exchanges' batch withdrawals, Safe and
 * ERC-4337 wallets, forwarders), read from a node's call traces. Pure: the node's answers in, transfers out.
 */

/**
 * An internal transfer's deposit index is this base plus its ordinal in the transaction. A top-level ETH
 * deposit is NATIVE_INDEX (-1) and a token deposit its Transfer log's index in the block, which stays far
 * below 10^9: every log costs at least 375 gas, so a block would need 3.75·10^11 gas for 10^9 of them. An
 * ordinal is bounded by gas the same way (each call costs at least 100), so the indexes also stay within
 * a 32-bit integer. Three ranges that never meet: no two deposits of one transaction share a key.
 */
export const INTERNAL_INDEX_BASE = 1_000_000_000;

export function isInternalIndex(index: number): boolean {
  return index >= INTERNAL_INDEX_BASE;
}

export interface InternalTransfer {
  txid: string;
  /**
   * Depth-first position of the frame among the transaction's frames that carry value (CALL, CREATE,
   * CREATE2, SELFDESTRUCT with a non-zero value), reverted ones included, the transaction's own frame
   * excluded. Counting only these keeps the number the same whichever tracer reads it: tracers differ
   * on listing zero-value frames such as precompile calls, and none moves ether.
   */
  ordinal: number;
  from: string;
  to: string;
  value: bigint;
}

/** geth's callTracer frame (debug_trace*), as geth, erigon, reth, nethermind and anvil answer it. */
export interface CallFrame {
  type: string;
  from: string;
  to?: string;
  value?: string;
  error?: string;
  calls?: CallFrame[];
}

/** One entry of a Parity-style trace (trace_block, trace_transaction). */
export interface ParityTrace {
  type: string;
  action: { callType?: string; from?: string; to?: string; value?: string; address?: string; refundAddress?: string; balance?: string };
  result?: { address?: string } | null;
  error?: string;
  traceAddress: number[];
  transactionHash?: string | null;
}

/**
 * Frame kinds that move their value to `to`. DELEGATECALL and CALLCODE run another code in the caller's
 * own account (a tracer may still show the caller's msg.value on them); STATICCALL carries none.
 */
const MOVES_VALUE = new Set(['CALL', 'CREATE', 'CREATE2', 'SELFDESTRUCT']);

function valueOf(hex: string | undefined): bigint {
  return hex ? BigInt(hex) : 0n;
}

/**
 * The transfers of one transaction's call tree. A failed transaction (its own frame has an error) moves
 * nothing, nor does any frame with an error or beneath one: a revert undoes the whole subtree.
 */
export function transfersOfCallTree(txid: string, top: CallFrame): InternalTransfer[] {
  const out: InternalTransfer[] = [];
  let ordinal = 0;
  const walk = (frame: CallFrame, undone: boolean) => {
    for (const call of frame.calls ?? []) {
      const reverted = undone || Boolean(call.error);
      const value = MOVES_VALUE.has(call.type.toUpperCase()) ? valueOf(call.value) : 0n;
      if (value > 0n) {
        const at = ordinal++;
        if (!reverted && call.to) out.push({ txid, ordinal: at, from: call.from, to: call.to, value });
      }
      walk(call, reverted);
    }
  };
  walk(top, Boolean(top.error));
  return out;
}

/**
 * A transaction's Parity-style traces as the callTracer's tree (one parser for both): `call` with its
 * callType, `create` to the created address, `suicide`/`selfdestruct` to the refund address. Undefined
 * when the list is not one tree (an entry whose parent is missing): the node's answer is unusable.
 */
export function callTreeOfParity(traces: ParityTrace[]): CallFrame | undefined {
  let top: CallFrame | undefined;
  // Pre-order, as nodes list them; each entry hangs under the frame at its traceAddress minus the last step.
  for (const t of [...traces].sort((a, b) => compareAddress(a.traceAddress, b.traceAddress))) {
    const frame = parityFrame(t);
    if (t.traceAddress.length === 0) {
      top = frame;
      continue;
    }
    let parent = top;
    for (const step of t.traceAddress.slice(0, -1)) parent = parent?.calls?.[step];
    const calls = parent ? (parent.calls ??= []) : undefined;
    if (!calls || t.traceAddress[t.traceAddress.length - 1] !== calls.length) return undefined;
    calls.push(frame);
  }
  return top;
}

function compareAddress(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

function parityFrame(t: ParityTrace): CallFrame {
  const a = t.action;
  const error = t.error ?? undefined;
  switch (t.type) {
    case 'call':
      return { type: (a.callType ?? 'call').toUpperCase(), from: a.from ?? '', to: a.to, value: a.value, error };
    case 'create':
      return { type: 'CREATE', from: a.from ?? '', to: t.result?.address, value: a.value, error };
    case 'suicide':
    case 'selfdestruct':
      return { type: 'SELFDESTRUCT', from: a.address ?? '', to: a.refundAddress, value: a.balance, error };
    default:
      // A kind this reader does not know keeps its place in the tree and moves nothing.
      return { type: t.type.toUpperCase(), from: a.from ?? '', error };
  }
}

/** trace_block's flat list, per transaction in the order given. */
export function groupParityByTransaction(traces: ParityTrace[]): Map<string, ParityTrace[]> {
  const out = new Map<string, ParityTrace[]>();
  for (const t of traces) {
    if (!t.transactionHash) continue;
    const list = out.get(t.transactionHash) ?? [];
    list.push(t);
    out.set(t.transactionHash, list);
  }
  return out;
}
