import Decimal from 'decimal.js';
import { NodeUnavailableError } from '../adapter';
import { rpcErrorMessage } from '../rpc-errors';
import { EndpointPool } from '../endpoints';

/** An error the node answered with (as opposed to not answering). */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
  ) {
    super(`${method}: ${message} (${code})`);
  }
}

/**
 * Bitcoin Core JSON-RPC (and its forks: litecoind, dogecoind, zcashd, bitcoin cash node). Credentials
 * come from the URL (http://user:password@host:port) and never appear in an error message. Several URLs
 * (comma-separated) are the network's endpoints: src/chains/endpoints.ts picks the one a call goes to.
 */
export class BitcoinRpc {
  private readonly pool: EndpointPool;
  private readonly credentials: readonly string[];

  constructor(rpcUrl: string | EndpointPool, private readonly timeoutMs = 30_000) {
    this.pool = typeof rpcUrl === 'string' ? new EndpointPool('utxo', rpcUrl) : rpcUrl;
    this.credentials = this.pool.credentials;
  }

  /** `signal` ends a call early (a long poll closed); such a call fails as the node not answering. */
  async call<T>(method: string, params: unknown[] = [], o: { signal?: AbortSignal } = {}): Promise<T> {
    let text: string;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    try {
      const body = JSON.stringify({ jsonrpc: '1.0', id: method, method, params });
      const res = await this.pool.post(body, {}, o.signal ? AbortSignal.any([timeout, o.signal]) : timeout);
      text = res.text;
      if (res.status === 401 || res.status === 403) throw new NodeUnavailableError(`${method}: node refused the credentials (HTTP ${res.status})`);
    } catch (e) {
      if (e instanceof NodeUnavailableError) throw e;
      throw new NodeUnavailableError(`${method}: node not reachable: ${rpcErrorMessage(e, this.credentials)}`, { cause: e });
    }
    let body: { result?: T; error?: { code: number; message: string } | null };
    try {
      body = JSON.parse(amountsAsStrings(text)) as typeof body;
    } catch {
      throw new NodeUnavailableError(`${method}: not a JSON-RPC answer`);
    }
    if (body.error) throw new RpcError(method, body.error.code, body.error.message);
    return body.result as T;
  }
}

/**
 * Bitcoin Core prints amounts as JSON numbers with 8 decimals; a double cannot hold every one of them.
 * Amount keys are turned into strings before parsing so that they reach `toSats` exactly.
 */
const AMOUNT_KEYS = /("(?:value|amount|fee|feerate|balance|relayfee|incrementalfee|incrementalrelayfee|mempoolminfee|minrelaytxfee|dustrelayfee|dustrelayfeefloor)"\s*:\s*)(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)/g;
function amountsAsStrings(text: string): string {
  return text.replace(AMOUNT_KEYS, '$1"$2"');
}

/** "0.00100000" coins → 100000n base units; more than 8 decimals is an error, never rounded. */
export function toSats(value: string | number): bigint {
  const d = new Decimal(String(value)).mul(1e8);
  if (!d.isInteger()) throw new RangeError(`amount has more than 8 decimals: ${value}`);
  return BigInt(d.toFixed(0));
}

export function fromSats(sats: bigint): string {
  return new Decimal(sats.toString()).div(1e8).toFixed(8);
}
