import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { BROADCAST_METHODS, LOOKUP_METHODS, broadcastFailure, headKey, hideTransaction, knowsTransaction, seededRandom, type RpcRequest, type RpcResponse } from './hostile-rpc-answers';

/**
 * A JSON-RPC proxy on 127.0.0.1 in front of one real node (anvil, surfnet, litecoind) that lies the way
 * a public RPC endpoint does (STYLE habit 8): it serves a stale head, drops answers after the node acted,
 * answers "not found" for mined transactions and reports an error for a broadcast it relayed. Every
 * request goes to the real node; only the answer is altered. Seeded, so a run can be replayed.
 */
export type FaultKind = 'staleHead' | 'drop' | 'nullReceipt' | 'broadcastError';
export const FAULT_KINDS: readonly FaultKind[] = ['staleHead', 'drop', 'nullReceipt', 'broadcastError'];

export interface HostileRpcOptions {
  /** The real node's URL; credentials and path (litecoind's /wallet/…) are kept for `url`. */
  upstream: string;
  seed?: number;
  /** Per matching request; a kind not named keeps its default. */
  probabilities?: Partial<Record<FaultKind, number>>;
  /** A stale head is one of the last `staleDepth` distinct answers to the same head call, never the newest. */
  staleDepth?: number;
  /** 'reset' destroys the socket; '502' answers Bad Gateway; 'mixed' picks one at random. */
  dropMode?: 'reset' | '502' | 'mixed';
  /** Start misbehaving (default) or calm. */
  enabled?: boolean;
  /** estimatesmartfee answers feerate -1 (Dogecoin Core's and old Core's "no estimate"), whatever the node said; calm or not. */
  negativeFeeEstimate?: boolean;
  /**
   * Methods answered "method not found" (-32601, geth's words) whether calm or not: a node without a
   * namespace (debug_*, trace_*). The node still gets the request; only the answer is replaced.
   */
  refuse?: (method: string) => boolean;
  /** The refusal's error object (default: geth's -32601 words, which ethers reads as UNSUPPORTED_OPERATION). */
  refusal?: (method: string) => { code: number; message: string };
  /**
   * Basic auth the proxy itself requires (401 without it): `url` and `proxied` then carry these credentials,
   * and the upstream is sent its own (from `upstream`) or none.
   */
  requireAuth?: { user: string; password: string };
}

export const DEFAULT_FAULT_PROBABILITIES: Readonly<Record<FaultKind, number>> = {
  staleHead: 0.25,
  drop: 0.03,
  nullReceipt: 0.25,
  broadcastError: 0.3,
};

export interface HostileRpcStats {
  requests: number;
  faults: Record<FaultKind, number>;
  /** Solana sends answered with their signature and never passed on (swallowFirstSend), re-sends included. */
  swallowed: number;
  /** The distinct signatures swallowed. */
  swallowedSignatures: string[];
  /** Broadcasts refused for relay policy without reaching the node (refuseOnPolicy). */
  policyRefusals: number;
}

export interface HostileRpc {
  /** The proxy's URL, with the upstream's credentials and path. */
  url: string;
  port: number;
  /** The same path and credentials as `other` (a URL on the upstream origin), through this proxy. */
  proxied(other: string): string;
  enabled(): boolean;
  /** Relays everything faithfully from now on (in-flight answers are not altered). */
  calm(): void;
  rage(): void;
  setProbabilities(p: Partial<Record<FaultKind, number>>): void;
  /**
   * A node stuck while still answering: every head call answers what it answered last before now (or its
   * first answer from now on), whatever the node's head is, until thaw(); everything else is relayed.
   * Independent of calm()/rage().
   */
  freezeHead(): void;
  thaw(): void;
  /** Requests refused for missing or wrong credentials (requireAuth). */
  unauthorized(): number;
  /** Calls of a JSON-RPC method relayed so far (batches counted per call). */
  calls(method: string): number;
  /**
   * Solana: the first transaction `signer` signs that reaches sendTransaction is answered with its own
   * signature, as if relayed, and never reaches the node; so is every re-send of it. Its blockhash expires
   * unseen: only a transaction signed again with a fresh blockhash can land. Calm or not.
   */
  swallowFirstSend(signer: string): void;
  /**
   * Bitcoin Core: from the next sendrawtransaction, for `ms`, every broadcast is refused for relay policy
   * (RPC_VERIFY_REJECTED -26 with `reason`, e.g. 'min relay fee not met' or 'dust') without reaching the
   * node, and testmempoolaccept says the same of every transaction it is asked about. Calm or not.
   */
  refuseOnPolicy(reason: string, ms: number): void;
  stats(): HostileRpcStats;
  close(): Promise<void>;
}

export async function startHostileRpc(opts: HostileRpcOptions): Promise<HostileRpc> {
  const upstream = new URL(opts.upstream);
  const random = seededRandom(opts.seed ?? 1);
  const probabilities: Record<FaultKind, number> = { ...DEFAULT_FAULT_PROBABILITIES, ...opts.probabilities };
  const staleDepth = Math.max(2, opts.staleDepth ?? 4);
  let on = opts.enabled ?? true;
  const faults: Record<FaultKind, number> = { staleHead: 0, drop: 0, nullReceipt: 0, broadcastError: 0 };
  let requests = 0;
  let swallow: { signer: string; signature?: string } | undefined;
  const swallowedSignatures: string[] = [];
  let swallowed = 0;
  let policy: { reason: string; ms: number; until?: number } | undefined;
  let policyRefusals = 0;
  const refusing = () => policy !== undefined && (policy.until === undefined || Date.now() < policy.until);
  /** Per head call, its last distinct answers (results only), newest last. */
  const heads = new Map<string, unknown[]>();
  /** While frozen, per head call, the answer it keeps giving. */
  let frozen: Map<string, unknown> | undefined;
  const upstreamAuth = upstream.username ? 'Basic ' + Buffer.from(`${decodeURIComponent(upstream.username)}:${decodeURIComponent(upstream.password)}`).toString('base64') : undefined;
  const wantedAuth = opts.requireAuth ? 'Basic ' + Buffer.from(`${opts.requireAuth.user}:${opts.requireAuth.password}`).toString('base64') : undefined;
  let refused = 0;
  const called = new Map<string, number>();
  const roll = (kind: FaultKind) => on && random() < probabilities[kind];

  const relay = (req: http.IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { ...req.headers, host: upstream.host, 'content-length': body.length };
      delete headers.connection;
      if (wantedAuth) {
        delete headers.authorization;
        if (upstreamAuth) headers.authorization = upstreamAuth;
      }
      const u = http.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      u.on('error', reject);
      u.end(body);
    });

  /** One call's answer, altered or not; `requestOf` is what the client asked. */
  const alter = (request: RpcRequest, response: RpcResponse): RpcResponse => {
    const method = request.method ?? '';
    if (method === 'estimatesmartfee' && opts.negativeFeeEstimate && !response.error) return { ...response, result: { feerate: -1, blocks: 0 } };
    if (opts.refuse?.(method)) {
      const error = opts.refusal?.(method) ?? { code: -32601, message: `the method ${method} does not exist/is not available` };
      return { jsonrpc: response.jsonrpc, id: response.id, error };
    }
    const key = headKey(request);
    if (key && !response.error && frozen) {
      if (!frozen.has(key)) {
        const seen = heads.get(key);
        frozen.set(key, seen && seen.length > 0 ? seen[seen.length - 1] : response.result);
      }
      return { ...response, result: frozen.get(key) };
    }
    if (key && !response.error) {
      const seen = heads.get(key) ?? [];
      const fresh = JSON.stringify(response.result);
      if (seen.length === 0 || JSON.stringify(seen[seen.length - 1]) !== fresh) seen.push(response.result);
      if (seen.length > staleDepth) seen.shift();
      heads.set(key, seen);
      if (seen.length >= 2 && roll('staleHead')) {
        faults.staleHead++;
        // One of the older distinct answers, never the newest.
        return { ...response, result: seen[Math.floor(random() * (seen.length - 1))] };
      }
      return response;
    }
    if (LOOKUP_METHODS.has(method) && knowsTransaction(method, response) && roll('nullReceipt')) {
      faults.nullReceipt++;
      return hideTransaction(method, response);
    }
    if (BROADCAST_METHODS.has(method) && roll('broadcastError')) {
      faults.broadcastError++;
      return broadcastFailure(method, response);
    }
    return response;
  };

  /** A call answered here, before (instead of) the node; undefined lets it through. */
  const intercept = (request: RpcRequest): RpcResponse | undefined => {
    const answer = (result: unknown, error?: unknown): RpcResponse => (error ? { jsonrpc: request.jsonrpc, id: request.id, result: null, error } : { jsonrpc: request.jsonrpc, id: request.id, result });
    if (request.method === 'sendTransaction' && swallow && Array.isArray(request.params) && typeof request.params[0] === 'string') {
      const encoding = (request.params[1] as { encoding?: string } | undefined)?.encoding;
      let tx: VersionedTransaction;
      try {
        tx = VersionedTransaction.deserialize(encoding === 'base64' ? Buffer.from(request.params[0], 'base64') : bs58.decode(request.params[0]));
      } catch {
        return undefined; // not a transaction: the node says so itself
      }
      const signature = bs58.encode(tx.signatures[0]);
      const signers = tx.message.staticAccountKeys.slice(0, tx.message.header.numRequiredSignatures).map((k) => k.toBase58());
      if (swallow.signature === undefined && signers.includes(swallow.signer)) {
        swallow.signature = signature;
        swallowedSignatures.push(signature);
      }
      if (swallow.signature !== signature) return undefined;
      swallowed++;
      return { jsonrpc: request.jsonrpc ?? '2.0', id: request.id, result: signature };
    }
    if (request.method === 'sendrawtransaction' && policy) {
      policy.until ??= Date.now() + policy.ms;
      if (!refusing()) return undefined;
      policyRefusals++;
      return answer(null, { code: -26, message: policy.reason });
    }
    return undefined;
  };

  /** testmempoolaccept (side-effect free, so relayed) answered as a node refusing on policy would. */
  const policyVerdict = (request: RpcRequest, response: RpcResponse): RpcResponse => {
    if (request.method !== 'testmempoolaccept' || !policy?.until || !refusing() || !Array.isArray(response.result)) return response;
    const results = response.result as Array<{ txid: string; wtxid?: string }>;
    return { ...response, result: results.map((r) => ({ txid: r.txid, wtxid: r.wtxid, allowed: false, 'reject-reason': policy!.reason })) };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        requests++;
        if (wantedAuth && req.headers.authorization !== wantedAuth) {
          refused++;
          res.writeHead(401, { 'www-authenticate': 'Basic realm="rpc"', 'content-type': 'text/plain' }).end('unauthorized');
          return;
        }
        const body = Buffer.concat(chunks);
        try {
          const asked = JSON.parse(body.toString('utf8')) as RpcRequest | RpcRequest[];
          for (const r of Array.isArray(asked) ? asked : [asked]) if (r.method) called.set(r.method, (called.get(r.method) ?? 0) + 1);
        } catch {
          // Not JSON: relayed as it came, counted nowhere.
        }
        const single = (() => {
          try {
            const parsed = JSON.parse(body.toString('utf8')) as RpcRequest | RpcRequest[];
            return Array.isArray(parsed) ? undefined : parsed;
          } catch {
            return undefined;
          }
        })();
        const own = single && intercept(single);
        if (own) {
          const out = Buffer.from(JSON.stringify(own));
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length }).end(out);
          return;
        }
        let up;
        try {
          up = await relay(req, body);
        } catch {
          res.destroy();
          return;
        }
        // The node has acted on the request (a broadcast is relayed); the client never learns the answer.
        if (roll('drop')) {
          faults.drop++;
          const mode = opts.dropMode === 'mixed' ? (random() < 0.5 ? 'reset' : '502') : (opts.dropMode ?? 'reset');
          if (mode === 'reset') res.destroy();
          else res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
          return;
        }
        let out = up.body;
        try {
          const asked = JSON.parse(body.toString('utf8')) as RpcRequest | RpcRequest[];
          const answered = JSON.parse(up.body.toString('utf8')) as RpcResponse | RpcResponse[];
          if (Array.isArray(asked) && Array.isArray(answered)) {
            const byId = new Map(asked.map((r) => [JSON.stringify(r.id), r]));
            out = Buffer.from(JSON.stringify(answered.map((a) => { const r = byId.get(JSON.stringify(a.id)); return r ? alter(r, policyVerdict(r, a)) : a; })));
          } else if (!Array.isArray(asked) && !Array.isArray(answered)) {
            out = Buffer.from(JSON.stringify(alter(asked, policyVerdict(asked, answered))));
          }
        } catch {
          // Not JSON (an HTTP error page, a 401): relayed as it came.
        }
        const headers: http.OutgoingHttpHeaders = { 'content-type': up.headers['content-type'] ?? 'application/json', 'content-length': out.length };
        res.writeHead(up.status, headers).end(out);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const proxied = (other: string) => {
    const u = new URL(other);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    if (opts.requireAuth) {
      u.username = encodeURIComponent(opts.requireAuth.user);
      u.password = encodeURIComponent(opts.requireAuth.password);
    }
    return u.toString().replace(/\/$/, '');
  };
  return {
    url: proxied(opts.upstream),
    port,
    proxied,
    enabled: () => on,
    calm: () => (on = false),
    rage: () => (on = true),
    setProbabilities: (p) => Object.assign(probabilities, p),
    freezeHead: () => (frozen ??= new Map()),
    thaw: () => (frozen = undefined),
    unauthorized: () => refused,
    calls: (method) => called.get(method) ?? 0,
    swallowFirstSend: (signer) => (swallow = { signer }),
    refuseOnPolicy: (reason, ms) => (policy = { reason, ms }),
    stats: () => ({ requests, faults: { ...faults }, swallowed, swallowedSignatures: [...swallowedSignatures], policyRefusals }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
