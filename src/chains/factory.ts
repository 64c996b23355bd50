import { ASSETS, NETWORKS } from '../domain/assets';
import type { ChainAdapter } from './adapter';
import { InvalidRequestError } from './adapter';
import { tokenContract, type NetworkRuntime } from './config';
import type { HdSeed } from './keys';
import { jsonRpc } from './json-rpc';
import { EndpointPool } from './endpoints';
import { sponsorMinimum } from '../observability/chain-metrics';
import { EvmAdapter } from './evm/adapter';
import { SolAdapter } from './sol/adapter';
import { UtxoAdapter } from './utxo/adapter';

/** Contract or mint per token ticker of a network: the runtime override, else the registry's mainnet one. */
export function tokenContracts(networkId: string, runtime: NetworkRuntime): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of Object.values(ASSETS)) {
    if (a.network !== networkId || a.type !== 'token') continue;
    const c = tokenContract(a, runtime);
    if (c) out[a.ticker] = c;
  }
  return out;
}

/** The one way to get an adapter: the deposit workflow's activities and the watchers call this. */
/** A named lock across processes (Database.withLock): the EVM gas tank's nonce is taken under it. */
export type LockFn = <T>(name: string, fn: () => Promise<T>) => Promise<T>;

export async function createAdapter(networkId: string, runtime: NetworkRuntime, seed: HdSeed, lock?: LockFn): Promise<ChainAdapter> {
  const net = NETWORKS[networkId];
  if (!net) throw new InvalidRequestError(`unknown network ${networkId}`);
  const tokens = tokenContracts(networkId, runtime);
  const role = net.family === 'evm' ? 'gas_tank' : net.family === 'sol' ? 'fee_payer' : undefined;
  if (role && runtime.sponsorMinBalance !== undefined) sponsorMinimum.set({ network: networkId, role }, Number(runtime.sponsorMinBalance));
  switch (net.family) {
    case 'evm': {
      const pool = new EndpointPool(networkId, runtime.rpcUrl);
      const chainId = BigInt(await pool.read((ep) => jsonRpc<string>(ep.url, 'eth_chainId', [], ep.headers)));
      return new EvmAdapter({
        network: networkId, mode: runtime.mode, rpcUrl: runtime.rpcUrl, rpcBatch: runtime.rpcBatch, chainId, seed, tokens, lock,
        finalityDepth: ASSETS[net.nativeTicker].confirmations, endpointHealth: runtime.endpointHealth,
      });
    }
    case 'utxo':
      return new UtxoAdapter({ network: networkId, mode: runtime.mode, rpcUrl: runtime.rpcUrl, seed, endpointHealth: runtime.endpointHealth });
    case 'sol':
      return new SolAdapter({ network: networkId, mode: runtime.mode, rpcUrl: runtime.rpcUrl, seed, tokens, priorityFeeMax: runtime.priorityFeeMax, endpointHealth: runtime.endpointHealth });
  }
}

export interface AdapterRegistry {
  /** The adapter of a configured network, created once and shared. */
  get(networkId: string): Promise<ChainAdapter>;
  networks(): string[];
  close(): Promise<void>;
}

/** One adapter per configured network for a worker process; an unconfigured network is an InvalidRequestError. */
export function createAdapterRegistry(config: Record<string, NetworkRuntime>, seed: HdSeed): AdapterRegistry {
  const made = new Map<string, Promise<ChainAdapter>>();
  return {
    get(networkId) {
      const runtime = config[networkId];
      if (!runtime) return Promise.reject(new InvalidRequestError(`network ${networkId} is not configured`));
      let p = made.get(networkId);
      if (!p) {
        p = createAdapter(networkId, runtime, seed);
        // A failed creation (node down at start) is retried by the next caller.
        p.catch(() => made.delete(networkId));
        made.set(networkId, p);
      }
      return p;
    },
    networks: () => Object.keys(config),
    async close() {
      for (const p of made.values()) await (await p.catch(() => undefined))?.close();
      made.clear();
    },
  };
}
