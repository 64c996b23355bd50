import { deriveAddressIn } from '../chains/addresses';
import type { ChainRuntimeConfig, ChainMode } from '../chains/config';
import type { HdSeed } from '../chains/keys';
import { exportPublicKeys, hasPublicDerivation, type PublicKeys } from './watch-only';
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
  await topUpPools(deps);
}

/** Pool addresses stored per insert while a pool fills: the API can take the first ones while the rest are derived. */
const POOL_RUN = 256;

/** Fills of one top-up: the last looks only whether what creates took meanwhile is back. */
const FILL_PASSES = 4;

/** Tops up the pool of every configured network without public derivation to `poolSize` free addresses. */
export async function topUpPools(deps: PublishDeps): Promise<void> {
  const lock = deps.withLock ?? (<T>(_n: string, fn: () => Promise<T>) => fn());
  for (const [network, runtime] of Object.entries(deps.chains)) {
    if (hasPublicDerivation(network)) continue;
    await lock(`address-pool:${network}`, async () => {
      // Creates take addresses while it fills: it looks again and fills again, a bounded number of times.
      for (let pass = 0; pass < FILL_PASSES; pass++) {
        const free = await poolFree(deps.db, network);
        addressPoolFree.set({ network }, free);
        if (free >= deps.poolSize) return;
        for (let added = 0; free + added < deps.poolSize; added += POOL_RUN) {
          const n = Math.min(POOL_RUN, deps.poolSize - free - added);
          await addToPool(deps.db, network, NETWORKS[network].addressFamily, n, (i) => deriveAddressIn(deps.seed, network, runtime.mode, i));
        }
      }
    });
  }
}

/**
 * Publishes now and then every `everyMs` (key rotation), and tops the address pools up every `poolEveryMs`:
 * what creates took is back within a fraction of a second, and a create that finds the pool dry waits for it
 * (api/routes/create.ts), so only a flood past what the worker derives (thousands of Solana addresses a second
 * a core) slows creates; each client is held to CREATE_RATE_LIMIT besides.
 */
export async function startPublisher(deps: PublishDeps, everyMs = 10_000, onError: (e: unknown) => void = () => undefined, poolEveryMs = 250) {
  await publishPublicMaterial(deps);
  let running = Promise.resolve();
  // One pass of each kind waits at most: a pass longer than its period is not followed by a queue of them.
  const queued = new Set<() => Promise<void>>();
  const after = (work: () => Promise<void>) => () => {
    if (queued.has(work)) return;
    queued.add(work);
    running = running
      .then(() => (queued.delete(work), work()))
      .catch(onError);
  };
  const publishAll = () => publishPublicMaterial(deps);
  const topUp = () => topUpPools(deps);
  const timers = [setInterval(after(publishAll), everyMs), setInterval(after(topUp), poolEveryMs)];
  for (const t of timers) t.unref();
  return {
    async stop() {
      for (const t of timers) clearInterval(t);
      await running;
    },
  };
}
