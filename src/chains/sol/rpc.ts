import { Connection, SendTransactionError, SolanaJSONRPCError } from '@solana/web3.js';
import { ChainError, NodeUnavailableError } from '../adapter';
import type { EndpointPool } from '../endpoints';

/**
 * web3.js 1.x turns an HTTP answer other than 2xx into a plain Error whose only trace of the status is its
 * message ("503 Service Unavailable: …"), and wraps some failures again in new plain Errors (getBalance,
 * getAccountInfo, getLatestBlockhash). Errors are told apart by type and code here, never by that text:
 * the transport is given a fetch that throws these typed errors itself, and web3.js hands a thrown Error
 * to the caller as it is.
 */
export class HttpStatusError extends NodeUnavailableError {
  constructor(readonly status: number) {
    super(`RPC answered HTTP ${status}`);
  }
}

/** The RPC could not be reached (refused, reset, timed out, DNS): `code` is the socket's, when it tells. */
export class RpcTransportError extends NodeUnavailableError {
  constructor(readonly code: string | undefined, cause: unknown) {
    super(`RPC unreachable${code ? ` (${code})` : ''}`, { cause });
  }
}

/** The error code of a network failure, from the error or its cause chain (undici puts it in `cause`). */
export function networkCode(e: unknown): string | undefined {
  for (let x: unknown = e, depth = 0; x && typeof x === 'object' && depth < 5; x = (x as { cause?: unknown }).cause, depth++) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** The pool's fetch (endpoint choice, basic auth), with transport failures and statuses as typed errors. */
function typedFetch(pool: EndpointPool): typeof fetch {
  return async (input, init) => {
    let res: Response;
    try {
      res = await pool.fetch(input, init);
    } catch (e) {
      throw new RpcTransportError(networkCode(e), e);
    }
    if (!res.ok) {
      // The body is read so the connection can be reused; its text is never part of the error.
      await res.arrayBuffer().catch(() => undefined);
      throw new HttpStatusError(res.status);
    }
    return res;
  };
}

/** A Connection over the network's endpoints whose transport failures arrive as NodeUnavailableError subclasses. */
export function solConnection(pool: EndpointPool): Connection {
  return new Connection(pool.primary.url, { commitment: 'confirmed', disableRetryOnRateLimit: true, fetch: typedFetch(pool) as never });
}

/**
 * The adapter's error table: its own errors (ChainError: a refusal keeps its type) and the node's refusal
 * of a transaction pass through; a JSON-RPC error answered by the node (a numeric code), an answer that
 * does not parse, and a network failure the transport did not wrap are NodeUnavailableError; anything else
 * is a fault of the gateway's and is thrown as it is.
 */
export function classifySolError(e: unknown): unknown {
  if (e instanceof ChainError || e instanceof SendTransactionError) return e;
  if (e instanceof SolanaJSONRPCError) return new NodeUnavailableError(`RPC error ${String(e.code)}`, { cause: e });
  // superstruct's StructError (web3.js's validation of every answer), by its name: not a dependency of ours.
  if (e instanceof Error && e.name === 'StructError') return new NodeUnavailableError('RPC answered an unexpected shape', { cause: e });
  const code = networkCode(e);
  if (code && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return new RpcTransportError(code, e);
  return e;
}
