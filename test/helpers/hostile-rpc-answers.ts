// How test/helpers/hostile-rpc.ts tells and rewrites a node's answers: which calls tell the head, look a
// transaction up or broadcast one, and the lies it answers with instead.

/** JSON-RPC methods that tell the head of the chain (EVM, Solana, Bitcoin Core). */
export const HEAD_METHODS = new Set(['eth_blockNumber', 'getSlot', 'getBlockHeight', 'getLatestBlockhash', 'getblockcount', 'getbestblockhash', 'getblockchaininfo']);
export const BROADCAST_METHODS = new Set(['eth_sendRawTransaction', 'sendTransaction', 'sendrawtransaction']);
export const LOOKUP_METHODS = new Set(['eth_getTransactionReceipt', 'eth_getTransactionByHash', 'getSignatureStatuses', 'getrawtransaction']);

export interface RpcRequest {
  jsonrpc?: string;
  id?: unknown;
  method?: string;
  params?: unknown[];
}
export interface RpcResponse {
  jsonrpc?: string;
  id?: unknown;
  result?: unknown;
  error?: unknown;
}

/** mulberry32: small, fast and good enough to pick faults reproducibly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A head call, identified by method and parameters: eth_getBlockByNumber only for "latest". */
export function headKey(r: RpcRequest): string | undefined {
  if (!r.method) return undefined;
  if (r.method === 'eth_getBlockByNumber' && Array.isArray(r.params) && r.params[0] === 'latest') return `${r.method}:${JSON.stringify(r.params)}`;
  if (HEAD_METHODS.has(r.method)) return `${r.method}:${JSON.stringify(r.params ?? [])}`;
  return undefined;
}

/** Whether the real answer shows a transaction the node knows (so that hiding it is a lie). */
export function knowsTransaction(method: string, res: RpcResponse): boolean {
  if (res.error) return false;
  if (method === 'getSignatureStatuses') {
    const value = (res.result as { value?: unknown[] } | undefined)?.value;
    return Array.isArray(value) && value.some((v) => v !== null);
  }
  return res.result !== null && res.result !== undefined;
}

export function hideTransaction(method: string, res: RpcResponse): RpcResponse {
  if (method === 'getSignatureStatuses') {
    const r = res.result as { context: unknown; value: unknown[] };
    return { ...res, result: { ...r, value: r.value.map(() => null) } };
  }
  if (method === 'getrawtransaction') {
    const { result: _hidden, ...rest } = res;
    return { ...rest, result: null, error: { code: -5, message: 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.' } };
  }
  return { ...res, result: null };
}

export function broadcastFailure(method: string, res: RpcResponse): RpcResponse {
  const { result: _relayed, ...rest } = res;
  // Bitcoin Core answers errors with result null; JSON-RPC 2.0 servers leave result out.
  const error = method === 'sendrawtransaction' ? { code: -1, message: 'transport error: connection reset by peer' } : { code: -32000, message: 'transport error: upstream connection reset' };
  return method === 'sendrawtransaction' ? { ...rest, result: null, error } : { ...rest, error };
}
