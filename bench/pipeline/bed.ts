import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDevnets, type Devnets } from '../../devnet';
import { HdSeed } from '../../src/chains/keys';
import { ensureDefaultKey } from '../../src/callbacks/signer';
import { SEARCH_ATTRIBUTE_CLI_TYPES } from '../../src/domain/search-attributes';
import { resolveTemporalCli } from '../../src/temporal/binaries';
import { freePort, startDevServer } from '../../devnet/devserver';
import { loadConfig } from '../../src/config';
import { benchServer } from '../lib/database';
import { startTemporalServer } from '../../test/helpers/temporal-server';
import { createSupervisor, type Supervisor } from '../../test/e2e/drill-procs';
import { startPgCounter, startRpcCounter, type PgCounter, type RpcCounter } from './counting-proxies';
import { startObserver, type Observer } from './observer';
import { startReceiver, type Receiver } from './receiver';

/**
 * The production topology on local parts, as the drill starts it (test/e2e/drill.ts) but with faithful
 * nodes and no chaos: PostgreSQL (a throw-away database on DATABASE_URL's server, else a throw-away
 * cluster), Temporal, anvil, surfnet and litecoind, one API process and two worker processes
 * (src/entry/*.ts) on the production defaults except where `env` says otherwise.
 * Temporal is, with `temporal: 'server'`, the production server on the same PostgreSQL (two throw-away
 * databases; test/helpers/temporal-server.ts, as docker-compose.yml runs it), or, with 'dev', the
 * embedded dev server on SQLite (one history shard), as `npm start` runs it.
 */
export interface Bed {
  dir: string;
  devnets: Devnets;
  databaseUrl: string;
  temporalAddress: string;
  apiBase: string;
  observer: Observer;
  receiver: Receiver;
  supervisor: Supervisor;
  /** PIDs of the API process and of the worker processes now (a restarted one has a new PID). */
  pids(): { api: number[]; workers: number[] };
  /** The gateway's database and Temporal's (names on the PostgreSQL server). */
  databases: { gateway: string; temporal: string[] };
  /** With `counting`: relays between the gateway's processes and each node (by network) and their database. */
  counters?: { rpc: Record<string, RpcCounter>; pg: PgCounter };
  stop(): Promise<void>;
}

export async function startBed(o: {
  solSlotTimeMs: number;
  /** anvil's block time in seconds (default 1). */
  ethBlockS?: number;
  temporal: 'server' | 'dev';
  env: Record<string, string>;
  log: (s: string) => void;
  /** Counting relays in front of the nodes' JSON-RPC and the gateway's database (bench/pipeline/counting-proxies.ts). */
  counting?: boolean;
  /** These networks' deposits on a task queue of their own, served by a third worker at this nice. */
  ownWorker?: { networks: string[]; nice: number };
}): Promise<Bed> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-bench-'));
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch((e: unknown) => o.log(`stop: ${String(e)}`));
    stops.length = 0;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const server = await benchServer();
    stops.push(() => server.stop());
    const db = { url: await server.database() };
    const logDir = path.join(os.tmpdir(), `gw-bench-logs-${path.basename(dir)}`);
    const temporalDbs = o.temporal === 'server' ? { history: server.reserve('gw_bench_temporal'), visibility: server.reserve('gw_bench_temporal_visibility') } : undefined;
    const temporal =
      temporalDbs
        ? await startTemporalServer({ pgUrl: server.url, dir: logDir, log: o.log, databases: temporalDbs })
        : await startDevServer({
            cliPath: resolveTemporalCli()!, host: '127.0.0.1', dataDir: path.join(dir, 'temporal'), namespace: 'default', port: 0, uiPort: 0,
            searchAttributes: SEARCH_ATTRIBUTE_CLI_TYPES, logLevel: loadConfig().temporalServerLogLevel,
          });
    stops.push(async () => {
      await temporal.stop();
      // The dev server's log goes with the process logs (TEMPORAL_SERVER_LOG_LEVEL raises its level).
      if (o.temporal === 'dev') fs.copyFileSync(path.join(dir, 'temporal', 'temporal.log'), path.join(logDir, 'temporal.log'));
    });
    // Test keys, generated now, in the throw-away data directory shared with the gateway's processes.
    const seed = HdSeed.loadOrCreate({ dataDir: dir });
    const devnets = await startDevnets(path.join(dir, 'devnet'), { seed, ethBlockTime: o.ethBlockS ?? 1, ltcBlockIntervalMs: 0, solSlotTimeMs: o.solSlotTimeMs });
    stops.push(() => devnets.stop());
    const observer = startObserver(devnets.state);
    stops.push(() => observer.stop());
    const publicKey = createPublicKey(fs.readFileSync(ensureDefaultKey(dir), 'utf8')).export({ type: 'spki', format: 'pem' }) as string;
    const receiver = await startReceiver(publicKey);
    stops.push(() => receiver.close());

    let counters: Bed['counters'];
    const chainEnv = { ...devnets.env };
    let gatewayDbUrl = db.url;
    if (o.counting) {
      counters = { rpc: {}, pg: await startPgCounter(db.url) };
      const c = counters;
      stops.push(() => c.pg.close());
      gatewayDbUrl = counters.pg.url;
      for (const [name, url] of Object.entries(devnets.env).filter(([k]) => k.endsWith('_RPC_URL'))) {
        const relay = await startRpcCounter(url);
        stops.push(() => relay.close());
        counters.rpc[name.replace(/_RPC_URL$/, '').toLowerCase()] = relay;
        chainEnv[name] = relay.url;
      }
    }
    const apiPort = await freePort('127.0.0.1');
    const taskQueue = `bench-${path.basename(dir)}`;
    const ownQueue = `${taskQueue}-own`;
    for (const n of o.ownWorker?.networks ?? []) chainEnv[`${n.toUpperCase()}_TASK_QUEUE`] = ownQueue;
    const supervisor = createSupervisor(logDir, {
      ...chainEnv,
      DATA_DIR: dir,
      DATABASE_URL: gatewayDbUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      CALLBACK_ALLOW_PRIVATE: 'true',
      // A burst creates hundreds of configurations from one loopback client.
      CREATE_RATE_LIMIT: '0',
      LOG_LEVEL: 'info',
      ...o.env,
    });
    stops.push(() => supervisor.stopAll());
    const api = supervisor.spawn('api', 'api', { PORT: String(apiPort) });
    const workers = [supervisor.spawn('worker', 'worker-1', {}), supervisor.spawn('worker', 'worker-2', {})];
    if (o.ownWorker) workers.push(supervisor.spawn('worker', 'worker-3', { WORKER_TASK_QUEUE: ownQueue, WORKER_NICE: String(o.ownWorker.nice) }));
    const end = Date.now() + 300_000;
    while (!(api.ready() && workers.every((w) => w.ready()))) {
      if (Date.now() > end) throw new Error(`API and workers not ready within 300 s (logs: ${logDir})`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const own = o.ownWorker ? ` (${o.ownWorker.networks.join(', ')} on the third, at nice ${o.ownWorker.nice})` : '';
    o.log(`PostgreSQL ${new URL(db.url).host}, Temporal ${temporal.address}, chains, API and ${workers.length} workers${own} ready (process logs: ${logDir})`);
    const pidOf = (s: typeof api) => (s.alive() && s.child()?.pid ? [s.child()!.pid!] : []);
    return {
      dir, devnets, databaseUrl: db.url, temporalAddress: temporal.address, apiBase: `http://127.0.0.1:${apiPort}/api`, observer, receiver, supervisor, stop,
      pids: () => ({ api: pidOf(api), workers: workers.flatMap(pidOf) }),
      databases: { gateway: new URL(db.url).pathname.slice(1), temporal: temporalDbs ? Object.values(temporalDbs) : [] },
      counters,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
