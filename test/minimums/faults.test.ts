import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities';
import type { RefreshReport } from '../../activities/minimums';
import { allAssetViews } from '../../api/assets';
import type { ChainAdapter } from '../../src/chains/adapter';
import type { ChainRuntimeConfig } from '../../src/chains/config';
import { createAdapter } from '../../src/chains/factory';
import { litecoindAvailable, startLitecoind, type LitecoindDevnet } from '../../devnet/litecoind';
import { DEVNET_PRICES, FixedPriceSource } from '../../src/prices/source';
import { ensureMinimumSchedule, MINIMUM_SCHEDULE_ID } from '../../src/temporal/minimum-schedule';
import { workflowsEntry } from '../../src/temporal/worker';
import { createTestDatabase } from '../helpers/db';
import { testSeed, tmpDir } from '../helpers/nodes';
import { waitFor } from '../helpers/process';
import { createLocalEnv } from '../helpers/temporal';
import { STANDARD_TIERS } from '../../src/domain/standard-tiers';
import { startHostileRpc } from '../helpers/hostile-rpc';

/**
 * The refresh against nodes that fail: one that never answers (a silent TCP listener) and one that is gone
 * (a closed port) beside a live litecoind. Those assets' minimums become unavailable (catalog null) without
 * holding up the others, and a worker shutting down does not wait for the silent node.
 */
const seed = testSeed();
let env: TestWorkflowEnvironment;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let ltc: LitecoindDevnet;
let silent: net.Server;
let chains: ChainRuntimeConfig;
const sockets = new Set<net.Socket>();
/** One adapter per network, as src/runtime/services.ts keeps them; a failed creation is retried. */
function adapterCache(of: () => ChainRuntimeConfig) {
  const made = new Map<string, Promise<ChainAdapter>>();
  const adapter = (n: string): Promise<ChainAdapter> => {
    let a = made.get(n);
    if (!a) {
      a = createAdapter(n, of()[n], seed);
      a.catch(() => made.delete(n));
      made.set(n, a);
    }
    return a;
  };
  return { adapter, made };
}
const { adapter, made: adapters } = adapterCache(() => chains);
let accepted = 0;

beforeAll(async () => {
  if (!litecoindAvailable()) throw new Error('litecoind is not installed: apt-get install -y litecoind (.ci/run installs it)');
  silent = net.createServer((s) => {
    accepted += 1;
    sockets.add(s); // accepts, reads, never answers
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  const closed = net.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  [env, database, ltc] = await Promise.all([createLocalEnv(), createTestDatabase(), startLitecoind({ dir: tmpDir('gw-min-ltc-') })]);
  chains = {
    litecoin: { mode: 'regtest', rpcUrl: ltc.rpcUrl, contracts: {} },
    ethereum: { mode: 'regtest', rpcUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, contracts: {} },
    solana: { mode: 'regtest', rpcUrl: `http://127.0.0.1:${closedPort}`, contracts: { sol_usdc: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' } },
  };
}, 120_000);

afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const a of adapters.values()) await a.then((x) => x.close()).catch(() => undefined);
  await new Promise<void>((r) => (silent ? silent.close(() => r()) : r()));
  await ltc?.stop();
  await env?.teardown();
  await database?.drop();
});

function minimumWorker(taskQueue: string, estimateTimeoutMs: number, on: { chains: ChainRuntimeConfig; adapter: (n: string) => Promise<ChainAdapter> } = { chains, adapter }) {
  return Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: workflowsEntry(),
    activities: createActivities({
      db: database.db,
      minimums: {
        chains: on.chains,
        adapter: on.adapter,
        prices: new FixedPriceSource(DEVNET_PRICES),
        maxCostPercent: '5.00',
        feePolicy: { domainOverrides: {}, tiers: [...STANDARD_TIERS] },
        refreshMs: 300_000,
        estimateTimeoutMs,
      },
    }),
  });
}

it('a silent node and a dead one make their assets unavailable (catalog null) while the live node\'s asset is computed', async () => {
  const worker = await minimumWorker('minimums-faults', 1500);
  const report = (await worker.runUntil(
    env.client.workflow.execute('minimumRefresh', { taskQueue: 'minimums-faults', workflowId: `minimum-refresh-faults-${Date.now()}` }),
  )) as RefreshReport;
  expect(report.computed).toEqual({ ltc: '0.00100000' });
  // (erc20 tokens and sol_usdt have no contract on this regtest configuration: not served, not refreshed)
  // A SOL forward's cost reads the node too (its priority fee, the payout's rent exemption).
  const solDown = expect.stringMatching(/^no fee estimate (from the Solana node|within 1500 ms)$/);
  expect(report.unavailable).toEqual({ eth: 'no fee estimate within 1500 ms', sol: solDown, sol_usdc: solDown });
  const views = new Map((await allAssetViews(database.db, chains, 60_000)).map((v) => [v.asset.ticker, v]));
  expect(views.get('eth')!.minimumBase).toBeNull();
  expect(views.get('eth')!.minimumStated).toBe(10n ** 15n); // info: the floor, nothing computed yet
  expect(views.get('sol_usdc')!.minimumBase).toBeNull();
  expect(views.get('sol')!.minimumBase).toBeNull();
  expect(views.get('ltc')!.minimumBase).toBe(100_000n);
}, 120_000);

it('a worker shutting down does not wait for a refresh stuck on a silent node', async () => {
  const taskQueue = 'minimums-shutdown';
  const worker = await minimumWorker(taskQueue, 600_000);
  const running = worker.run();
  const acceptedBefore = accepted;
  try {
    await ensureMinimumSchedule(env.client, { taskQueue, everyMs: 3_600_000 });
    // The run that creation triggers is under way, its activity waiting on the silent node.
    await waitFor(() => accepted > acceptedBefore, 30_000, 'the activity connected to the silent node');
    await env.client.schedule.getHandle(MINIMUM_SCHEDULE_ID).pause('test done');
  } finally {
    const t0 = Date.now();
    worker.shutdown();
    await running;
    expect(Date.now() - t0).toBeLessThan(5000);
  }
}, 120_000);

it('a node that refuses once is asked again in the same refresh: its asset has a minimum now, not after the next run', async () => {
  let refusals = 0;
  // litecoind in warm-up (-28) answers the refresh's first call; every later call is relayed.
  const proxy = await startHostileRpc({
    upstream: ltc.rpcUrl,
    enabled: false,
    refuse: () => refusals++ < 1,
    refusal: () => ({ code: -28, message: 'Loading block index...' }),
  });
  const only: ChainRuntimeConfig = { litecoin: { mode: 'regtest', rpcUrl: proxy.url, contracts: {} } };
  const { adapter: own, made } = adapterCache(() => only);
  try {
    const worker = await minimumWorker('minimums-refused-once', 1500, { chains: only, adapter: own });
    const report = (await worker.runUntil(
      env.client.workflow.execute('minimumRefresh', { taskQueue: 'minimums-refused-once', workflowId: `minimum-refresh-refused-once-${Date.now()}` }),
    )) as RefreshReport;
    expect(refusals).toBeGreaterThan(1);
    expect(report.unavailable).toEqual({});
    expect(report.computed).toEqual({ ltc: '0.00100000' });
  } finally {
    for (const a of made.values()) await a.then((x) => x.close()).catch(() => undefined);
    await proxy.close();
  }
}, 120_000);
