import { postJson } from './http-post';
import { credentialsOf } from './rpc-url';

/**
 * The RPC endpoints of one network (`{NETWORK}_RPC_URL`, comma-separated) and where a call goes: a read to
 * one healthy endpoint (the first in the operator's order, the next on a transport failure), a broadcast
 * to every healthy one. Which endpoints are healthy is src/chains/endpoint-health.ts's to say; until it has
 * said, every endpoint is. Credentials in a URL (http://user:pass@host) become a basic Authorization header:
 * Node's fetch refuses such a URL, and the URL kept here (for requests only) has none.
 */

/** One endpoint. `label` names it in logs and metrics: its position in the list, never its URL. */
export interface Endpoint {
  index: number;
  label: string;
  /** The URL without userinfo; it may still hold a provider's key in its path, so it is never logged. */
  url: string;
  /** The host and port, for a log line (no userinfo, no path, no query). */
  host: string;
  headers: Record<string, string>;
}

/** `http://user:pass@host/path` → the URL without userinfo and its basic Authorization header. */
export function endpointOf(raw: string, index = 0): Endpoint {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    // The text itself may hold a credential: not repeated.
    throw new Error(`invalid configuration: RPC endpoint ${index} is not a URL`);
  }
  const headers: Record<string, string> = {};
  if (u.username || u.password) {
    headers.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
    u.username = '';
    u.password = '';
  }
  // A bare origin keeps its form (no trailing slash added), as the single URL was used before.
  const url = u.pathname === '/' && !raw.trim().endsWith('/') && !u.search ? u.origin : u.toString();
  return { index, label: String(index), url, host: u.host, headers };
}

/** The comma-separated list of `{NETWORK}_RPC_URL`, in the operator's order of preference. */
export function parseEndpoints(list: string): Endpoint[] {
  const parts = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (parts.length === 0) throw new Error('invalid configuration: no RPC endpoint given');
  return parts.map((p, i) => endpointOf(p, i));
}

/** JSON-RPC methods that send a transaction (EVM, Solana, Bitcoin Core): they go to every healthy endpoint. */
const BROADCAST = /"method"\s*:\s*"(?:eth_sendRawTransaction|sendTransaction|sendrawtransaction)"/;

export function isBroadcast(body: string): boolean {
  return BROADCAST.test(body);
}

/** Whether a JSON-RPC answer (one or a batch) holds no error: a broadcast an endpoint took. */
export function answeredWithoutError(text: string): boolean {
  try {
    const a = JSON.parse(text) as unknown;
    const all = Array.isArray(a) ? a : [a];
    return all.every((r) => r !== null && typeof r === 'object' && ((r as { error?: unknown }).error ?? null) === null);
  } catch {
    return false;
  }
}

export class EndpointPool {
  readonly endpoints: readonly Endpoint[];
  /** What of the configured URLs may be a credential, to keep out of error messages (rpc-url.ts). */
  readonly credentials: readonly string[];
  private readonly healthy: boolean[];
  /** Best head seen per endpoint: with none healthy, reads go to the most advanced. */
  private readonly heads: Array<bigint | undefined>;

  constructor(
    readonly network: string,
    list: string | Endpoint[],
  ) {
    this.endpoints = typeof list === 'string' ? parseEndpoints(list) : list;
    this.credentials = typeof list === 'string' ? list.split(',').filter((u) => u.trim() !== '').flatMap((u) => credentialsOf(u.trim())) : [];
    this.healthy = this.endpoints.map(() => true);
    this.heads = this.endpoints.map(() => undefined);
  }

  get primary(): Endpoint {
    return this.endpoints[0];
  }

  isHealthy(ep: Endpoint): boolean {
    return this.healthy[ep.index];
  }

  setHealth(ep: Endpoint, healthy: boolean, head?: bigint): void {
    this.healthy[ep.index] = healthy;
    if (head !== undefined) this.heads[ep.index] = head;
  }

  /** Healthy endpoints in the operator's order; with none healthy, all of them, the most advanced first. */
  readOrder(): Endpoint[] {
    const ok = this.endpoints.filter((e) => this.healthy[e.index]);
    if (ok.length > 0) return ok;
    const h = (e: Endpoint) => this.heads[e.index] ?? -1n;
    return [...this.endpoints].sort((a, b) => (h(b) > h(a) ? 1 : h(b) < h(a) ? -1 : a.index - b.index));
  }

  /**
   * A read: to the first endpoint of readOrder, then to the next one only if the request could not be made
   * (`post` threw). An answer, even an error answer, is the node's and is returned as it is.
   */
  async read<R>(post: (ep: Endpoint) => Promise<R>): Promise<R> {
    const order = this.readOrder();
    let last: unknown;
    for (const ep of order) {
      try {
        return await post(ep);
      } catch (e) {
        last = e;
      }
    }
    throw last;
  }

  /**
   * A broadcast: to every healthy endpoint at once. The first endpoint's answer when it took the
   * transaction, else another's that did, else the first's (its error is classified by the adapter as
   * before, "already known" included), else the first's failure.
   */
  async broadcast<R>(post: (ep: Endpoint) => Promise<R>, took: (r: R) => boolean): Promise<R> {
    const targets = this.readOrder().filter((e, i) => i === 0 || this.healthy[e.index]);
    const results = await Promise.allSettled(targets.map((ep) => post(ep)));
    const fulfilled = results.filter((r): r is PromiseFulfilledResult<Awaited<R>> => r.status === 'fulfilled').map((r) => r.value);
    const first = results[0];
    if (first.status === 'fulfilled' && took(first.value)) return first.value;
    const other = fulfilled.find((r) => took(r));
    if (other !== undefined) return other;
    if (first.status === 'fulfilled') return first.value;
    if (fulfilled.length > 0) return fulfilled[0];
    throw first.reason;
  }

  /** A JSON-RPC body to its endpoint(s): a broadcast to every healthy one, anything else as a read. */
  send<R>(body: string, post: (ep: Endpoint) => Promise<R>, text: (r: R) => string): Promise<R> {
    return isBroadcast(body) ? this.broadcast(post, (r) => answeredWithoutError(text(r))) : this.read(post);
  }

  /**
   * A JSON-RPC body to the network's endpoint(s) (`send`) through node:http (http-post.ts), with each
   * endpoint's Authorization header: the answer's status and text.
   */
  post(body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<{ status: number; text: string }> {
    const one = async (ep: Endpoint) => {
      const a = await postJson(ep.url, { ...headers, ...ep.headers }, body, signal);
      return { status: a.status, text: a.bytes.toString('utf8') };
    };
    return this.send(body, one, (a) => a.text);
  }

  /**
   * A fetch for Solana's Connection: the URL it is given is ignored, the call goes as `post` sends it, and
   * the answer comes back as a Response.
   */
  readonly fetch = async (_input: unknown, init?: RequestInit): Promise<Response> => {
    const body = typeof init?.body === 'string' ? init.body : '';
    const r = await this.post(body, headersOf(init?.headers), init?.signal ?? undefined);
    return new Response(r.text, { status: r.status, headers: { 'content-type': 'application/json' } });
  };
}

function headersOf(h: RequestInit['headers']): Record<string, string> {
  if (!h) return {};
  if (h instanceof Headers) return Object.fromEntries(h.entries());
  if (Array.isArray(h)) return Object.fromEntries(h);
  return { ...(h as Record<string, string>) };
}
