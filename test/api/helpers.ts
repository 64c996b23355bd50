import type { AddressInfo } from 'node:net';
import { createApp } from '../../api/app';
import { createApiServer } from '../../api/server';
import { publicRoutes } from '../../api/routes';
import type { PublicDeps } from '../../api/deps';
import type { ChainMode, ChainRuntimeConfig } from '../../src/chains/config';
import { deriveAddressIn } from '../../src/chains/addresses';
import { HdSeed } from '../../src/chains/keys';
import { loadConfig } from '../../src/config';
import { publicMaterialFrom, publishPublicMaterial } from '../../src/addresses/public-material';
import { NETWORKS } from '../../src/domain/assets';
import { createTestDatabase } from '../helpers/db';

export const TEST_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

/** Every registry network configured in one mode (the RPC URL is never called by the API). */
export function allChains(mode: ChainMode = 'mainnet', only?: string[]): ChainRuntimeConfig {
  const out: ChainRuntimeConfig = {};
  for (const id of Object.keys(NETWORKS)) if (!only || only.includes(id)) out[id] = { mode, rpcUrl: 'http://127.0.0.1:1', contracts: {} };
  return out;
}

export type TestApi = Awaited<ReturnType<typeof startApi>>;

/**
 * A real database and the real app on a random port; `deps` can be changed between requests. The test
 * plays the worker's part first: it publishes the xpubs of TEST_MNEMONIC and fills the Solana pool.
 */
export async function startApi(over: Partial<Omit<PublicDeps, 'db'>> = {}) {
  const database = await createTestDatabase();
  const chains = over.chains ?? allChains();
  await publishPublicMaterial({ db: database.db, seed: HdSeed.fromMnemonic(TEST_MNEMONIC), chains: allChains(), poolSize: 60 });
  const deps: PublicDeps = {
    db: database.db,
    addresses: publicMaterialFrom(database.db),
    chains,
    // No create limit by default: a test file makes hundreds of creates from one address (test/api/rate-limit.test.ts tests it).
    config: loadConfig({ CREATE_RATE_LIMIT: '0' }),
    getPublicKeyPem: async () => undefined,
    ...over,
  };
  // The routes read deps on every request, so tests may swap fields of this object.
  const logged: unknown[] = [];
  const server = createApiServer(createApp({ routes: [(r) => publicRoutes(deps, r)], log: (_m, e) => logged.push(e), trustProxy: deps.config.trustProxy }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    deps,
    db: database.db,
    /** The test database's URL (for a connection of the test's own). */
    url: database.url,
    logged,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await database.drop();
    },
    get: (p: string) => fetch(base + p),
    json: async (p: string, init?: RequestInit) => {
      const r = await fetch(base + p, init);
      return { status: r.status, body: (await r.json()) as Record<string, unknown> & { errors?: Record<string, string[]> }, headers: r.headers };
    },
  };
}

export type Transport = 'GET query' | 'POST form' | 'POST JSON';
export const TRANSPORTS: Transport[] = ['GET query', 'POST form', 'POST JSON'];

/** Calls create by one transport; JSON keeps numbers as given, query and form send text. */
export async function callCreate(api: TestApi, path: string, transport: Transport, params: Record<string, unknown>) {
  const text = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]));
  if (transport === 'GET query') return api.json(`${path}?${text}`);
  if (transport === 'POST form') {
    return api.json(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: text.toString() });
  }
  return api.json(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(params) });
}

/** Rows of a raw query (node-postgres result). */
export async function queryRows<T>(db: TestApi['db'], query: Parameters<TestApi['db']['execute']>[0]): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

const MERCHANT_SEED = HdSeed.fromMnemonic('legal winner thank year wave sausage worth useful legal winner thank yellow');

/** A merchant payout address: valid on the network, never one of the gateway's (another seed's) addresses. */
export function merchantAddress(network: string, mode: ChainMode = 'mainnet', index = 0n): string {
  return deriveAddressIn(MERCHANT_SEED, network, mode, index);
}
