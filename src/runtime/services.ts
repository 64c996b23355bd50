import type { ChainAdapter } from '../chains/adapter';
import { chainConfigFromEnv, type ChainRuntimeConfig } from '../chains/config';
import { HdSeed } from '../chains/keys';
import { deriveAddressIn } from '../chains/addresses';
import { loadSigner, type Signer } from '../callbacks/signer';
import { ConfigError, type Config } from '../config';
import type { Database } from '../db/client';
import type { FeePolicy } from '../domain/fees';
import { STANDARD_TIERS } from '../domain/standard-tiers';
import { publicMaterialFrom, type PublicMaterial } from '../addresses/public-material';
import { DEVNET_PRICES, FixedPriceSource, HttpPriceSource, NoPriceSource, type PriceSource } from '../prices/source';

/**
 * What the internet-facing API has: configuration, database, chains and public material. No seed, no
 * signing key (DESIGN 9): deposit addresses come from published xpubs and the Solana pool.
 */
export interface ApiServices {
  cfg: Config;
  database: Database;
  chains: ChainRuntimeConfig;
  material: PublicMaterial;
}

/** Everything the worker has, built once per process from the configuration: the API's part and the secrets. */
export interface Services extends ApiServices {
  seed: HdSeed;
  signer: Signer;
  prices: PriceSource;
  feePolicy: FeePolicy;
  adapter(network: string): Promise<ChainAdapter>;
  /** The operator's commission address per UTXO network: index 2^31−1 of its own seed, never an address_in. */
  treasuryAddress(network: string): string | undefined;
  close(): Promise<void>;
}

export const TREASURY_INDEX = 2n ** 31n - 1n;

/**
 * Quotes reach confirmed callbacks and decide how much token gas is recovered, so no process invents
 * them: PRICE_SOURCE_URL, or PRICE_SOURCE=none said on purpose. The fixed table serves only local chains
 * (every configured network in regtest mode), whose coins have no market.
 */
export function priceSourceFor(cfg: Config, chains: ChainRuntimeConfig): PriceSource {
  if (cfg.priceSourceUrl) return new HttpPriceSource(cfg.priceSourceUrl);
  if (cfg.priceSourceNone) return new NoPriceSource();
  const networks = Object.values(chains);
  // No network, nothing to price (a worker or API started without chains serves no asset).
  if (networks.length === 0) return new NoPriceSource();
  if (networks.every((n) => n.mode === 'regtest')) return new FixedPriceSource(DEVNET_PRICES);
  throw new ConfigError(
    'invalid configuration: PRICE_SOURCE_URL must be set (or PRICE_SOURCE=none to run without prices) when a network is not a local regtest chain',
  );
}

/** The variables that carry a secret, and where the configuration holds each: the seed and the signing key. */
export const SECRET_VARIABLES = {
  GATEWAY_MNEMONIC: 'mnemonic',
  GATEWAY_MNEMONIC_FILE: 'mnemonicFile',
  SIGNING_KEY_PEM: 'signingKeyPem',
  SIGNING_KEY_FILE: 'signingKeyFile',
} as const satisfies Record<string, keyof Config>;

/** The API process refuses every secret: the seed and the signing key belong to the worker. */
export function refuseSecrets(cfg: Config): void {
  const given = Object.entries(SECRET_VARIABLES)
    .filter(([, field]) => cfg[field] !== undefined)
    .map(([name]) => name);
  if (given.length > 0) {
    throw new ConfigError(
      `invalid configuration: the API process holds no secret; unset ${given.join(', ')} (the seed and the signing key belong to the worker)`,
    );
  }
}

export function buildApiServices(cfg: Config, database: Database, env: NodeJS.ProcessEnv = process.env): ApiServices {
  refuseSecrets(cfg);
  const chains = chainConfigFromEnv(env);
  // The API quotes no price itself, but both tiers share one configuration: it refuses the same gap at once.
  priceSourceFor(cfg, chains);
  return { cfg, database, chains, material: publicMaterialFrom(database.db) };
}

/** The API's part of a process that also runs the worker (the embedded default, tests): no secret in it. */
export function apiPart(services: ApiServices): ApiServices {
  const { cfg, database, chains, material } = services;
  return { cfg, database, chains, material };
}

export function buildServices(cfg: Config, database: Database, env: NodeJS.ProcessEnv = process.env): Services {
  const chains = chainConfigFromEnv(env);
  const prices = priceSourceFor(cfg, chains);
  const seed = HdSeed.loadOrCreate({ mnemonic: cfg.mnemonic, mnemonicFile: cfg.mnemonicFile, dataDir: cfg.dataDir });
  const adapters = new Map<string, Promise<ChainAdapter>>();
  const adapter = (network: string) => {
    let a = adapters.get(network);
    if (!a) {
      const runtime = chains[network];
      if (!runtime) return Promise.reject(new Error(`network ${network} is not configured`));
      // The adapters' modules (the chains' signing and transaction libraries) load with the first adapter:
      // the API, which imports this file for buildApiServices, never builds one.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { createAdapter } = require('../chains/factory') as typeof import('../chains/factory');
      a = createAdapter(network, { ...runtime, priorityFeeMax: cfg.solanaPriorityFeeMax }, seed, database.withLock);
      // A failed construction (node down at start) is retried on the next call, not cached.
      a.catch(() => adapters.delete(network));
      adapters.set(network, a);
    }
    return a;
  };
  /** The treasury address per network: derived once. */
  const treasuries = new Map<string, string>();
  return {
    cfg,
    database,
    seed,
    chains,
    material: publicMaterialFrom(database.db),
    signer: loadSigner(cfg),
    prices,
    feePolicy: { domainOverrides: cfg.feeDomainOverrides, tiers: [...STANDARD_TIERS] },
    adapter,
    treasuryAddress(network) {
      const runtime = chains[network];
      if (!runtime) return undefined;
      let address = treasuries.get(network);
      if (address === undefined) treasuries.set(network, (address = deriveAddressIn(seed, network, runtime.mode, TREASURY_INDEX)));
      return address;
    },
    async close() {
      for (const a of adapters.values()) await a.then((x) => x.close()).catch(() => undefined);
    },
  };
}
