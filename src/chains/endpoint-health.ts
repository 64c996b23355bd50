import { NETWORKS } from '../domain/assets';
import { logger } from '../observability/logger';
import { describeError } from '../observability/redact';
import { chainHeadAge, endpointHead, endpointHealthy, endpointRemovals, endpointsHealthy, observeChainHead, watchSponsor } from '../observability/chain-metrics';
import type { Endpoint, EndpointPool } from './endpoints';

/**
 * Which endpoints of a network reads go to. Every probe interval each endpoint's head (and its block time)
 * is read; an endpoint is taken out when its head lags the best one by more than `maxLag` blocks, or lags
 * at all while it has not moved for `stallMs` (a node stuck while still answering), or when two probes in
 * a row could not reach it. It is back in once its head is within half of `maxLag` of the best and moving.
 * A chain where nobody advances (a regtest chain between blocks) takes nobody out.
 */
export interface HealthBounds {
  /** Blocks (Solana: slots) an endpoint may be behind the best endpoint before it is taken out. */
  maxLag: number;
  /** How long an endpoint behind the others may go without a new head before it is taken out. */
  stallMs: number;
  probeMs: number;
}

/** Per network, by its block interval: a few blocks of lag, a stall of several intervals. */
const DEFAULTS: Record<string, HealthBounds> = {
  ethereum: { maxLag: 3, stallMs: 60_000, probeMs: 4_000 },
  solana: { maxLag: 150, stallMs: 20_000, probeMs: 2_000 },
  bitcoin: { maxLag: 2, stallMs: 1_800_000, probeMs: 30_000 },
  bitcoincash: { maxLag: 2, stallMs: 1_800_000, probeMs: 30_000 },
  litecoin: { maxLag: 2, stallMs: 450_000, probeMs: 15_000 },
  dogecoin: { maxLag: 3, stallMs: 300_000, probeMs: 10_000 },
  zcash: { maxLag: 3, stallMs: 300_000, probeMs: 10_000 },
};

export function healthBounds(network: string, given: Partial<HealthBounds> = {}): HealthBounds {
  const d = DEFAULTS[network] ?? (NETWORKS[network]?.family === 'evm' ? DEFAULTS.ethereum : { maxLag: 3, stallMs: 300_000, probeMs: 10_000 });
  return { ...d, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) };
}

export interface Head {
  height: bigint;
  /** The head block's time, seconds since the epoch, when the node tells it. */
  time?: number;
}

async function rpc<T>(ep: Endpoint, method: string, params: unknown[], timeoutMs: number): Promise<T> {
  const res = await fetch(ep.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ep.headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`${method}: HTTP ${res.status}`);
  const body = (await res.json()) as { result?: T; error?: { code?: number } | null };
  if (body.error) throw new Error(`${method}: node error ${body.error.code ?? ''}`);
  return body.result as T;
}

/** The head of one endpoint, read with the family's own calls. */
export async function probeHead(family: 'evm' | 'sol' | 'utxo', ep: Endpoint, timeoutMs = 5_000): Promise<Head> {
  if (family === 'evm') {
    const b = await rpc<{ number: string; timestamp: string } | null>(ep, 'eth_getBlockByNumber', ['latest', false], timeoutMs);
    if (!b) throw new Error('no latest block');
    return { height: BigInt(b.number), time: Number(BigInt(b.timestamp)) };
  }
  if (family === 'sol') {
    const slot = await rpc<number>(ep, 'getSlot', [{ commitment: 'confirmed' }], timeoutMs);
    const time = await rpc<number | null>(ep, 'getBlockTime', [slot], timeoutMs).catch(() => null);
    return { height: BigInt(slot), ...(time !== null ? { time } : {}) };
  }
  const info = await rpc<{ blocks: number; bestblockhash: string }>(ep, 'getblockchaininfo', [], timeoutMs);
  const header = await rpc<{ time?: number }>(ep, 'getblockheader', [info.bestblockhash], timeoutMs).catch(() => undefined);
  return { height: BigInt(info.blocks), ...(header?.time !== undefined ? { time: header.time } : {}) };
}

interface State {
  head?: bigint;
  time?: number;
  /** When the head last moved (or was first seen). */
  movedAt: number;
  failures: number;
  healthy: boolean;
}

export interface EndpointHealth {
  /** One round of probes and decisions (the timer calls it; tests may too). */
  check(): Promise<void>;
  close(): void;
}

export interface EndpointHealthOptions {
  family: 'evm' | 'sol' | 'utxo';
  bounds?: Partial<HealthBounds>;
  /** The sponsor account's balance (EVM gas tank, Solana fee payer), read when metrics are scraped. */
  sponsor?: { role: 'gas_tank' | 'fee_payer'; balance(): Promise<bigint> };
  /** Defaults to probeHead; replaced in tests of the decisions alone. */
  probe?: (ep: Endpoint) => Promise<Head>;
}

/** Starts the rounds on a timer that never keeps the process alive; close() stops them. */
export function startEndpointHealth(pool: EndpointPool, opts: EndpointHealthOptions): EndpointHealth {
  const network = pool.network;
  const bounds = healthBounds(network, opts.bounds);
  const probe = opts.probe ?? ((ep: Endpoint) => probeHead(opts.family, ep, Math.max(1_000, bounds.probeMs)));
  const states: State[] = pool.endpoints.map(() => ({ movedAt: Date.now(), failures: 0, healthy: true }));
  for (const ep of pool.endpoints) endpointHealthy.set({ network, endpoint: ep.label }, 1);
  endpointsHealthy.set({ network }, pool.endpoints.length);

  const decide = (ep: Endpoint, s: State, best: bigint, now: number) => {
    const lag = s.head === undefined ? undefined : best - s.head;
    let reason: string | undefined;
    if (s.failures >= 2) reason = 'unreachable';
    else if (lag !== undefined && lag > BigInt(bounds.maxLag)) reason = 'lagging';
    else if (lag !== undefined && lag > 0n && now - s.movedAt > bounds.stallMs) reason = 'stalled';
    if (s.healthy && reason) {
      s.healthy = false;
      endpointRemovals.inc({ network, endpoint: ep.label, reason });
      logger.warn({ network, endpoint: ep.label, host: ep.host, reason, head: s.head?.toString(), best: best.toString() }, 'rpc endpoint taken out of reads');
    } else if (!s.healthy && s.failures === 0 && lag !== undefined && lag * 2n <= BigInt(bounds.maxLag) && (lag === 0n || now - s.movedAt <= bounds.stallMs)) {
      s.healthy = true;
      logger.info({ network, endpoint: ep.label, host: ep.host, head: s.head?.toString() }, 'rpc endpoint back in reads');
    }
    pool.setHealth(ep, s.healthy, s.head);
    endpointHealthy.set({ network, endpoint: ep.label }, s.healthy ? 1 : 0);
  };

  const check = async () => {
    const answers = await Promise.allSettled(pool.endpoints.map((ep) => probe(ep)));
    const now = Date.now();
    answers.forEach((a, i) => {
      const s = states[i];
      if (a.status === 'rejected') {
        s.failures++;
        if (s.failures === 2) logger.debug({ network, endpoint: pool.endpoints[i].label, err: describeError(a.reason) }, 'rpc endpoint not reachable');
        return;
      }
      s.failures = 0;
      if (s.head === undefined || a.value.height !== s.head) s.movedAt = now;
      s.head = a.value.height;
      s.time = a.value.time;
      endpointHead.set({ network, endpoint: pool.endpoints[i].label }, Number(s.head));
    });
    const reached = states.filter((s) => s.failures === 0 && s.head !== undefined);
    if (reached.length === 0) {
      states.forEach((s, i) => decide(pool.endpoints[i], s, 0n, now));
    } else {
      const top = reached.reduce((a, b) => (b.head! > a.head! ? b : a));
      states.forEach((s, i) => decide(pool.endpoints[i], s, top.head!, now));
      observeChainHead(network, top.head!, top.time);
      if (top.time === undefined) chainHeadAge.remove({ network });
    }
    endpointsHealthy.set({ network }, states.filter((s) => s.healthy).length);
  };
  const forgetSponsor = opts.sponsor ? watchSponsor(network, opts.sponsor.role, opts.sponsor.balance) : undefined;

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    timer = setTimeout(loop, bounds.probeMs);
    timer.unref();
  };
  const loop = () => {
    if (stopped) return;
    void check()
      .catch((e: unknown) => logger.debug({ network, err: describeError(e) }, 'rpc endpoint check failed'))
      .finally(() => {
        if (!stopped) next();
      });
  };
  // The first round after one interval: until then every endpoint counts as healthy, as at any start.
  next();
  return {
    check,
    close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      forgetSponsor?.();
    },
  };
}
