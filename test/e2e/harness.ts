import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Contract, JsonRpcProvider, Network } from 'ethers';
import { Connection, PublicKey } from '@solana/web3.js';
import type { SQL } from 'drizzle-orm';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { startShop } from './order-book';
import { startDevnets, type DevnetOptions, type Devnets } from '../../devnet';
import { devnetUtxo } from '../../devnet/drive';
import { ERC20 } from '../../src/chains/evm/erc20';
import { HdSeed } from '../../src/chains/keys';
import { loadConfig } from '../../src/config';
import { ASSETS } from '../../src/domain/assets';
import { SEARCH_ATTRIBUTE_CLI_TYPES } from '../../src/domain/search-attributes';
import { startApiRuntime, type ApiRuntime } from '../../src/runtime/api';
import { publishPublicMaterial } from '../../src/addresses/public-material';
import { apiPart, buildServices, type Services } from '../../src/runtime/services';
import { startWorkerRuntime, type WorkerRuntime } from '../../src/runtime/worker';
import { resolveTemporalCli } from '../../src/temporal/binaries';
import { DEVNET_PRICES, FixedPriceSource, type PriceSource } from '../../src/prices/source';
import { startDevServer, type DevServer } from '../../devnet/devserver';
import { createTestDatabase } from '../helpers/db';
import { waitFor } from '../helpers/process';

export type Gateway = Awaited<ReturnType<typeof startGateway>>;

/**
 * The whole gateway on real parts: PostgreSQL, the Temporal CLI dev server, anvil, surfnet and
 * litecoind (regtest), the worker with its watchers, the API, and a merchant receiver on loopback.
 * The local Bitcoin and Bitcoin Cash nodes join when a test asks for them (`devnets`).
 */
export async function startGateway(
  opts: {
    worker?: boolean;
    prices?: PriceSource;
    env?: Record<string, string>;
    devnets?: Pick<DevnetOptions, 'bitcoin' | 'bitcoincash'>;
    /** The payment workflows' fallback reading (default 1 second: the watcher's signals are not waited for). */
    depositPollInterval?: string;
    /** Replaces variables of the local nodes (e.g. an RPC URL through a proxy) once they run. */
    chainEnv?: (devnetEnv: Record<string, string>) => Promise<Record<string, string>>;
  } = {},
) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-e2e-'));
  const stops: Array<() => Promise<void>> = [];
  // Every part stops, in reverse order (the database last); the first failure is reported afterwards,
  // e.g. a connection that outlived the worker (test/helpers/db.ts drop()).
  const stop = async () => {
    const failures: unknown[] = [];
    for (const s of stops.reverse()) await s().catch((e: unknown) => failures.push(e));
    stops.length = 0;
    fs.rmSync(dir, { recursive: true, force: true });
    if (failures.length) throw failures[0];
  };
  try {
    const database = await createTestDatabase();
    stops.push(() => database.drop());
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: database.url,
      CALLBACK_ALLOW_PRIVATE: 'true',
      WATCH_INTERVAL_MS: '300',
      TEMPORAL_TASK_QUEUE: `e2e-${path.basename(dir)}`,
      ...opts.env,
    };
    const cfg = loadConfig(env);
    const seed = HdSeed.loadOrCreate({ dataDir: dir });
    // Half-second slots: Solana finality (32 slots) in ~16 s rather than npm start's ~32 s.
    const devnets: Devnets = await startDevnets(path.join(dir, 'devnet'), {
      seed, ethBlockTime: 1, ltcBlockIntervalMs: 0, solSlotTimeMs: 500, bitcoin: false, bitcoincash: false, ...opts.devnets,
    });
    stops.push(() => devnets.stop());
    const temporal: DevServer = await startDevServer({
      cliPath: resolveTemporalCli()!,
      host: '127.0.0.1',
      dataDir: path.join(dir, 'temporal'),
      namespace: 'default',
      port: 0,
      uiPort: 0,
      searchAttributes: SEARCH_ATTRIBUTE_CLI_TYPES,
    });
    stops.push(() => temporal.stop());
    const chainEnv = { ...devnets.env, ...(await opts.chainEnv?.(devnets.env)) };
    const services: Services = buildServices(cfg, database, { ...env, ...chainEnv });
    if (opts.prices) services.prices = opts.prices;
    stops.push(() => services.close());
    let worker: WorkerRuntime | undefined;
    if (opts.worker !== false) {
      worker = await startWorkerRuntime(services, { address: temporal.address, depositPollInterval: opts.depositPollInterval ?? '1 second' });
      stops.push(() => worker!.stop());
    }
    // Without a worker here, the test publishes the public material the API derives addresses from.
    if (!worker) await publishPublicMaterial({ db: database.db, seed, chains: services.chains, publicKeyPem: () => services.signer.publicKeyPem(), poolSize: 20 });
    const api: ApiRuntime = await startApiRuntime(apiPart(services), { port: 0 });
    stops.push(() => api.stop());

    const publicKey = (await services.signer.publicKeyPem())!;
    const { orders, merchant, merchantUrl } = await startShop(publicKey, stops);

    return { dir, cfg, env, database, devnets, temporal, services, worker, api, merchant, merchantUrl, orders, publicKey, stop };
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
}

/** POST /api/{ticker}/create with a JSON body; returns the parsed configuration. */
export async function createConfig(gw: Gateway, ticker: string, params: Record<string, unknown>) {
  const res = await fetch(`${gw.api.url}/${ticker}/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  const body = (await res.json()) as Record<string, string>;
  if (res.status !== 200) throw new Error(`create ${ticker} → ${res.status} ${JSON.stringify(body)}`);
  gw.orders.add(String(params.callback_url), ticker, body);
  return body;
}

export async function logsOf(gw: Gateway, ticker: string, callback: string) {
  const res = await fetch(`${gw.api.url}/${ticker}/logs?callback=${encodeURIComponent(callback)}`);
  return { status: res.status, body: (await res.json()) as { callbacks: Array<Record<string, unknown> & { logs: Array<Record<string, unknown>> }> } };
}

/** Callbacks the merchant received for a payment UUID, parsed fields only (verified ones). */
export function callbacksFor(gw: Gateway, uuid: string) {
  return gw.merchant.received.filter((r) => r.verified && r.fields?.uuid === uuid);
}

export async function waitForCallback(gw: Gateway, pred: (f: Record<string, unknown>) => boolean, timeoutMs: number, what: string) {
  await waitFor(() => gw.merchant.received.some((r) => r.verified && r.fields && pred(r.fields)), timeoutMs, what);
  return gw.merchant.received.find((r) => r.verified && r.fields && pred(r.fields))!;
}

/** The merchant's on-chain balance of `ticker` at `address`, in base units. */
export async function balanceOf(gw: Gateway, ticker: string, address: string): Promise<bigint> {
  const st = gw.devnets.state;
  const a = ASSETS[ticker];
  if (a.network === 'ethereum') {
    const p = new JsonRpcProvider(st.ethereum!.rpcUrl, Network.from(BigInt(st.ethereum!.chainId)), { staticNetwork: true, cacheTimeout: -1 });
    try {
      if (a.type === 'native') return await p.getBalance(address);
      return BigInt(await new Contract(st.ethereum!.tokens[ticker], ERC20, p).getFunction('balanceOf')(address));
    } finally {
      p.destroy();
    }
  }
  if (a.network === 'solana') {
    const c = new Connection(st.solana!.rpcUrl, 'confirmed');
    if (a.type === 'native') return BigInt(await c.getBalance(new PublicKey(address)));
    const ata = getAssociatedTokenAddressSync(new PublicKey(st.solana!.tokens[ticker]), new PublicKey(address));
    const info = await c.getTokenAccountBalance(ata).catch(() => undefined);
    return info ? BigInt(info.value.amount) : 0n;
  }
  return devnetUtxo(st, a.network).balance(address);
}

/** The devnet prices while `available`, no price at all while not: a price source a test switches off. */
export class SwitchablePrices implements PriceSource {
  private readonly fixed = new FixedPriceSource(DEVNET_PRICES);
  constructor(public available = true) {}
  async usdt(symbol: string) {
    return this.available ? this.fixed.usdt(symbol) : undefined;
  }
}

/** GET /api/cryptocurrencies, each asset's minimum. */
export async function catalogOf(gw: Gateway): Promise<Record<string, { minimum: string | null }>> {
  return (await (await fetch(`${gw.api.url}/cryptocurrencies`)).json()) as Record<string, { minimum: string | null }>;
}

/** GET /api/{ticker}/info's minimum_transaction. */
export async function infoMinimumOf(gw: Gateway, ticker: string): Promise<string> {
  return ((await (await fetch(`${gw.api.url}/${ticker}/info`)).json()) as { minimum_transaction: string }).minimum_transaction;
}

/** Rows of a query on the gateway's own database (what a test reads of its records, never its verdict on chain). */
export async function rowsOf<T>(gw: Gateway, query: SQL): Promise<T[]> {
  return ((await gw.database.db.execute(query)) as unknown as { rows: T[] }).rows;
}
