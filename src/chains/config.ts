import { TASK_QUEUE_NAME } from '../config';
import { ASSETS, NETWORKS } from '../domain/assets';
import type { HealthBounds } from './endpoint-health';
import { parseEndpoints } from './endpoints';

export type ChainMode = 'mainnet' | 'testnet' | 'regtest';

/** Runtime configuration of one network the gateway serves. A network absent from the map is not configured. */
export interface NetworkRuntime {
  mode: ChainMode;
  /** One URL, or several comma-separated (src/chains/endpoints.ts); each may carry basic-auth credentials. */
  rpcUrl: string;
  /** The node's WebSocket endpoint for new-head notifications (src/detection/heads.ts); without it the watcher polls only. */
  wsUrl?: string;
  /** UTXO: `longpoll`, a new-head feed held open on the node's RPC (`waitforblockheight`, src/detection/long-poll-feed.ts). */
  headFeed?: 'longpoll';
  /** The Temporal task queue of this network's deposit workflows (`{NETWORK}_TASK_QUEUE`), when not the gateway's own. */
  taskQueue?: string;
  /** Token contract / mint overrides per ticker (local devnets deploy their own). */
  contracts: Record<string, string>;
  /** EVM: the most JSON-RPC calls sent in one HTTP request (`{NETWORK}_RPC_BATCH`; 1: each alone). */
  rpcBatch?: number;
  /** Solana: cap on a forward's compute-unit price, micro-lamports (the gateway's SOLANA_PRIORITY_FEE_MAX_MICROLAMPORTS). */
  priorityFeeMax?: bigint;
  /** Bounds of the endpoints' health checks (`{NETWORK}_RPC_MAX_LAG`, `_RPC_STALL_SECONDS`, `_RPC_PROBE_SECONDS`). */
  endpointHealth?: Partial<HealthBounds>;
  /** EVM gas tank / Solana fee payer: below this balance (base units) an alert fires (`{NETWORK}_SPONSOR_MIN_BALANCE`). */
  sponsorMinBalance?: bigint;
}

/** `{NETWORK}_RPC_BATCH` when unset: calls made together go as one JSON-RPC batch of at most this many. */
export const DEFAULT_RPC_BATCH = 10;
/** The largest batch one may ask for: node providers cap batches, the strictest common ones near 100. */
export const MAX_RPC_BATCH = 100;

export type ChainRuntimeConfig = Record<string, NetworkRuntime>;

const envName = (networkId: string) => networkId.toUpperCase();

/**
 * From the environment: a network is configured when `{NETWORK}_RPC_URL` is set (e.g. ETHEREUM_RPC_URL,
 * LITECOIN_RPC_URL, SOLANA_RPC_URL); `{NETWORK}_CHAIN` picks mainnet (default), testnet or regtest;
 * `{TICKER}_CONTRACT` (e.g. ERC20_USDT_CONTRACT, SOL_USDC_CONTRACT) overrides a token's contract or mint;
 * `{NETWORK}_WS_URL` (EVM and Solana: ETHEREUM_WS_URL, SOLANA_WS_URL) names the node's WebSocket endpoint,
 * whose new-head notifications wake the watcher between its polls; `{NETWORK}_HEAD_FEED=longpoll` (UTXO:
 * BITCOIN_HEAD_FEED, LITECOIN_HEAD_FEED, ...) holds a `waitforblockheight` call open on the node for the same
 * purpose, one per worker process; `{NETWORK}_TASK_QUEUE` puts the network's deposit workflows on a task queue of
 * their own, served by the workers that set `WORKER_TASK_QUEUE` to it (src/runtime/task-queues.ts); `{NETWORK}_RPC_BATCH` (EVM: 1 to 100,
 * default DEFAULT_RPC_BATCH) bounds the JSON-RPC calls made together that go in one HTTP request, 1 for a
 * node that refuses batches.
 * `{NETWORK}_RPC_URL` may list several endpoints, comma-separated, in order of preference; an endpoint whose
 * head lags the others by more than `{NETWORK}_RPC_MAX_LAG` blocks, or stays behind without moving for
 * `{NETWORK}_RPC_STALL_SECONDS`, is taken out of reads until it catches up (src/chains/endpoint-health.ts,
 * heads read every `{NETWORK}_RPC_PROBE_SECONDS`; defaults per network there). `{NETWORK}_SPONSOR_MIN_BALANCE`
 * (base units) is the EVM gas tank's or Solana fee payer's balance below which ops/prometheus/alerts.yml fires.
 */
export function chainConfigFromEnv(env: NodeJS.ProcessEnv): ChainRuntimeConfig {
  const out: ChainRuntimeConfig = {};
  for (const id of Object.keys(NETWORKS)) {
    const rpcUrl = env[`${envName(id)}_RPC_URL`];
    if (!rpcUrl) continue;
    const mode = (env[`${envName(id)}_CHAIN`] ?? 'mainnet') as ChainMode;
    if (!['mainnet', 'testnet', 'regtest'].includes(mode)) {
      throw new Error(`invalid configuration: ${envName(id)}_CHAIN must be one of mainnet, testnet, regtest`);
    }
    const wsUrl = env[`${envName(id)}_WS_URL`];
    if (wsUrl && !/^wss?:\/\//.test(wsUrl)) throw new Error(`invalid configuration: ${envName(id)}_WS_URL must be a ws:// or wss:// URL`);
    const headFeed = env[`${envName(id)}_HEAD_FEED`];
    if (headFeed !== undefined && headFeed !== '') {
      if (NETWORKS[id].family !== 'utxo') {
        throw new Error(`invalid configuration: ${envName(id)}_HEAD_FEED is for Bitcoin-family (UTXO) networks; ${envName(id)} takes ${envName(id)}_WS_URL`);
      }
      if (headFeed !== 'longpoll') throw new Error(`invalid configuration: ${envName(id)}_HEAD_FEED must be longpoll (or unset)`);
    }
    const taskQueue = env[`${envName(id)}_TASK_QUEUE`];
    if (taskQueue !== undefined && taskQueue !== '' && !TASK_QUEUE_NAME.test(taskQueue)) {
      throw new Error(`invalid configuration: ${envName(id)}_TASK_QUEUE must be a task queue name (letters, digits, . _ -), or unset`);
    }
    const batch = env[`${envName(id)}_RPC_BATCH`];
    let rpcBatch: number | undefined;
    if (batch !== undefined && batch !== '') {
      rpcBatch = Number(batch);
      if (!/^[0-9]+$/.test(batch) || rpcBatch < 1 || rpcBatch > MAX_RPC_BATCH) {
        throw new Error(`invalid configuration: ${envName(id)}_RPC_BATCH must be a whole number from 1 to ${MAX_RPC_BATCH}`);
      }
    }
    parseEndpoints(rpcUrl);
    const endpointHealth = healthFromEnv(env, envName(id));
    const minBalance = env[`${envName(id)}_SPONSOR_MIN_BALANCE`];
    if (minBalance !== undefined && minBalance !== '' && !/^[0-9]+$/.test(minBalance)) {
      throw new Error(`invalid configuration: ${envName(id)}_SPONSOR_MIN_BALANCE must be a whole number of base units`);
    }
    out[id] = {
      mode, rpcUrl, ...(wsUrl ? { wsUrl } : {}), ...(headFeed ? { headFeed: 'longpoll' as const } : {}), ...(taskQueue ? { taskQueue } : {}), ...(rpcBatch !== undefined ? { rpcBatch } : {}), contracts: {},
      ...(Object.keys(endpointHealth).length ? { endpointHealth } : {}),
      ...(minBalance ? { sponsorMinBalance: BigInt(minBalance) } : {}),
    };
  }
  for (const [key, value] of Object.entries(env)) {
    const m = /^([A-Z0-9]+_[A-Z0-9]+)_CONTRACT$/.exec(key);
    if (!m || !value) continue;
    const asset = ASSETS[m[1].toLowerCase()];
    if (asset && out[asset.network]) out[asset.network].contracts[asset.ticker] = value;
  }
  return out;
}

function healthFromEnv(env: NodeJS.ProcessEnv, prefix: string): Partial<HealthBounds> {
  const read = (suffix: string, scale: number): number | undefined => {
    const v = env[`${prefix}_${suffix}`];
    if (v === undefined || v === '') return undefined;
    if (!/^[0-9]+(\.[0-9]+)?$/.test(v) || Number(v) <= 0) throw new Error(`invalid configuration: ${prefix}_${suffix} must be a positive number`);
    return Math.round(Number(v) * scale);
  };
  const out: Partial<HealthBounds> = {};
  const maxLag = read('RPC_MAX_LAG', 1);
  const stallMs = read('RPC_STALL_SECONDS', 1000);
  const probeMs = read('RPC_PROBE_SECONDS', 1000);
  if (maxLag !== undefined) out.maxLag = maxLag;
  if (stallMs !== undefined) out.stallMs = stallMs;
  if (probeMs !== undefined) out.probeMs = probeMs;
  return out;
}

/** A token's contract or mint on this deployment: the runtime override, else the registry's mainnet one. */
export function tokenContract(asset: { ticker: string; contract?: string }, runtime: NetworkRuntime): string | undefined {
  return runtime.contracts[asset.ticker] ?? (runtime.mode === 'mainnet' ? asset.contract : undefined);
}
