import { deriveAddressIn } from '../chains/addresses';
import type { ChainRuntimeConfig, ChainMode } from '../chains/config';
import type { HdSeed } from '../chains/keys';
import { exportPublicKeys, hasPublicDerivation, type PublicKeys } from '../chains/watch-only';
import type { Db } from '../db/client';
import type { AddressSource } from '../db/queries/create-config';
import { CALLBACK_PUBLIC_KEY, XPUBS_KEY, addToPool, poolFree, publish, readPublished } from '../db/queries/public-material';
import { NETWORKS } from '../domain/assets';
import { addressPoolFree } from '../observability/metrics';
import { DerivedAddressSupply, derivedSource, xpubDeriver } from './derived-addresses';
import { threadDeriver } from './derive-thread';

/** Where a new configuration of a network takes its address_in, and (xpub networks) who keeps those stocked. */
export interface DepositAddresses {
  from: AddressSource;
  supply?: DerivedAddressSupply;
}

/** The API's view of deposit addresses and the callback key: public material read from the database. */
export interface PublicMaterial {
  depositAddresses(networkId: string, mode: ChainMode): Promise<DepositAddresses>;
  /** The callback signer's public key as the worker last published it (read live). */
  publicKeyPem(): Promise<string | undefined>;
}

export class PublicKeysMissingError extends Error {
  constructor() {
    super('no public keys published yet: the worker publishes them at start');
    this.name = 'PublicKeysMissingError';
  }
}

/** Reads what the worker published; the xpubs are cached for a minute (they change only with the seed). */
export function publicMaterialFrom(db: Db): PublicMaterial {
  let cached: { keys: PublicKeys; at: number } | undefined;
  const keys = async (): Promise<PublicKeys> => {
    if (cached && Date.now() - cached.at < 60_000) return cached.keys;
    const raw = await readPublished(db, XPUBS_KEY);
    if (!raw) throw new PublicKeysMissingError();
    cached = { keys: JSON.parse(raw) as PublicKeys, at: Date.now() };
    return cached.keys;
  };
  // One supply per xpub source, for the life of the process (a new seed is a new source).
  const supplies = new Map<string, DerivedAddressSupply>();
  return {
    async depositAddresses(networkId, mode) {
      if (!hasPublicDerivation(networkId)) return { from: { kind: 'pool', network: networkId } };
      const k = await keys();
      const xpub = k.xpubs[networkId];
      if (!xpub) throw new Error(`no public key published for ${networkId}`);
      const source = derivedSource(xpub, networkId, mode);
      let supply = supplies.get(source);
      if (!supply) {
        const derive = xpubDeriver(k, networkId, mode);
        supply = new DerivedAddressSupply(db, source, NETWORKS[networkId].addressFamily, derive, threadDeriver(xpub, networkId, mode, derive));
        supplies.set(source, supply);
      }
      return { from: { kind: 'derived', source }, supply };
    },
    publicKeyPem: () => readPublished(db, CALLBACK_PUBLIC_KEY),
  };
}

export interface PublishDeps {
  db: Db;
  seed: HdSeed;
  chains: ChainRuntimeConfig;
  /** The callback signer's current public key; undefined publishes none. */
  publicKeyPem?: () => Promise<string | undefined>;
  /** Free pool addresses kept per network without public derivation. */
  poolSize: number;
  withLock?: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
}

/**
 * The worker's side of DESIGN 9: publishes the account xpubs and the callback public key, and tops up the
 * address pool of every configured network without public derivation (Solana) to `poolSize` free.
 */
export async function publishPublicMaterial(deps: PublishDeps): Promise<void> {
  await publish(deps.db, XPUBS_KEY, JSON.stringify(exportPublicKeys(deps.seed)));
  const pem = await deps.publicKeyPem?.();
  if (pem) await publish(deps.db, CALLBACK_PUBLIC_KEY, pem);
  const lock = deps.withLock ?? (<T>(_n: string, fn: () => Promise<T>) => fn());
  for (const [network, runtime] of Object.entries(deps.chains)) {
    if (hasPublicDerivation(network)) continue;
    await lock(`address-pool:${network}`, async () => {
      const free = await poolFree(deps.db, network);
      if (free < deps.poolSize) {
        await addToPool(deps.db, network, NETWORKS[network].addressFamily, deps.poolSize - free, (i) => deriveAddressIn(deps.seed, network, runtime.mode, i));
      }
      addressPoolFree.set({ network }, Math.max(free, deps.poolSize));
    });
  }
}

/** Publishes now and then every `everyMs` (key rotation, pool refill) until stopped. */
export async function startPublisher(deps: PublishDeps, everyMs = 10_000, onError: (e: unknown) => void = () => undefined) {
  await publishPublicMaterial(deps);
  let running = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() => publishPublicMaterial(deps)).catch(onError);
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
