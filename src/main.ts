import path from 'node:path';
import { chainConfigFromEnv } from './chains/config';
import { startDevnets, type Devnets } from '../devnet';
import { settleNewLocalChains } from '../devnet/reset';
import { HdSeed } from './chains/keys';
import { ethersKeccakInWasm } from './addresses/public-child';
import type { Config } from './config';
import { configOrExit } from './entry/common';
import { openDatabase, type Database } from './db/client';
import { SEARCH_ATTRIBUTE_CLI_TYPES } from './domain/search-attributes';
import { startMetricsServer } from './observability/metrics';
import { loadApiThread } from './runtime/api-thread';
import { apiPart, buildServices } from './runtime/services';
import { startWorkerRuntime } from './runtime/worker';
import { workerAssignment } from './runtime/task-queues';
import { resolveTemporalCli } from './temporal/binaries';
import { reservePorts, startDevServer, type DevServer } from '../devnet/devserver';
import { installQuietRuntime } from './temporal/worker';

/**
 * The embedded default, one process tree: database (PGlite unless DATABASE_URL), the Temporal CLI dev
 * server with its Web UI (unless TEMPORAL_ADDRESS), local chains (unless chain RPC URLs are given),
 * the worker with its watchers, and the API.
 */
const stops: Array<() => Promise<void>> = [];
let stopping = false;

/** Stops everything started so far, newest first; whatever hangs, the process is gone within 10 s. */
async function shutdown(reason: string, code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`${reason}, stopping`);
  setTimeout(() => process.exit(code || 1), 9_000).unref();
  for (const stop of stops.reverse()) {
    await stop().catch((e) => console.error('stop failed:', e instanceof Error ? e.message : e));
  }
  process.exit(code);
}

async function main(cfg: Config): Promise<void> {
  // A network with a task queue of its own needs worker processes: refused before anything starts (a local
  // chain's queue is checked again once the devnet has named its RPC URL).
  workerAssignment(cfg, chainConfigFromEnv(process.env), 'embedded');
  installQuietRuntime(cfg);
  await ethersKeccakInWasm();
  process.on('SIGINT', () => void shutdown('received SIGINT', 0));
  process.on('SIGTERM', () => void shutdown('received SIGTERM', 0));
  // The API thread loads its modules meanwhile (on the machine's other core, if it has one).
  const apiThread = cfg.embeddedApi === 'process' ? undefined : loadApiThread({ pglite: !cfg.databaseUrl });
  if (apiThread) stops.push(() => apiThread.terminate());

  // The Go servers it starts (the Temporal dev server, bchd) collect garbage when their heap has grown by a
  // quarter instead of doubled: a small, steady heap is what the embedded default wants (an operator's own
  // GOGC stands).
  process.env.GOGC ??= '25';
  const env = { ...process.env };
  const wantDevnet = cfg.devnet ?? Object.keys(chainConfigFromEnv(process.env)).length === 0;
  if (wantDevnet) reservePorts(cfg.port, cfg.temporalUiPort, cfg.metricsPort);
  let cli: string | undefined;
  if (!cfg.temporalAddress) {
    cli = resolveTemporalCli(cfg.temporalCliPath);
    if (!cli) throw new Error('no Temporal CLI found: run `node scripts/setup-temporal.js` or set TEMPORAL_CLI_PATH or TEMPORAL_ADDRESS');
  }
  // The database, the local chains and the Temporal dev server depend on none of each other: started at once.
  const [opened, chains, server] = await Promise.allSettled([
    openDatabase(cfg),
    wantDevnet
      ? startDevnets(path.join(cfg.dataDir, 'devnet'), {
          seed: HdSeed.loadOrCreate({ mnemonic: cfg.mnemonic, mnemonicFile: cfg.mnemonicFile, dataDir: cfg.dataDir }),
          solInThread: true,
          btcdSigCacheEntries: 1000,
        })
      : undefined,
    cli
      ? startDevServer({
          cliPath: cli,
          host: cfg.host,
          dataDir: path.join(cfg.dataDir, 'temporal'),
          namespace: cfg.temporalNamespace,
          uiPort: cfg.temporalUiPort,
          searchAttributes: SEARCH_ATTRIBUTE_CLI_TYPES,
          logLevel: cfg.temporalServerLogLevel,
        })
      : undefined,
  ]);
  // Stopped newest first, whatever else failed: the dev server, the chains, then the database.
  if (opened.status === 'fulfilled') stops.push(() => opened.value.close());
  if (chains.status === 'fulfilled' && chains.value) stops.push(chains.value.stop);
  if (server.status === 'fulfilled' && server.value) stops.push(server.value.stop);
  for (const r of [opened, chains, server]) if (r.status === 'rejected') throw r.reason;
  const database = (opened as PromiseFulfilledResult<Database>).value;
  console.log(`database: ${database.kind === 'pglite' ? `embedded PGlite in ${path.join(cfg.dataDir, 'pglite')}` : 'PostgreSQL'} (migrations applied)`);

  const devnets = (chains as PromiseFulfilledResult<Devnets | undefined>).value;
  if (devnets) {
    Object.assign(env, devnets.env);
    for (const line of await settleNewLocalChains(database.db, devnets.newChains)) console.log(line);
    console.log(`local chains: ${Object.keys(chainConfigFromEnv(env)).join(', ')} (npm run devnet -- pay|mine …)`);
  }

  const devServer = (server as PromiseFulfilledResult<DevServer | undefined>).value;
  const address = devServer?.address ?? cfg.temporalAddress!;
  if (devServer) {
    console.log(`Temporal dev server: ${address} (pid ${devServer.pid})`);
    console.log(`Temporal UI: ${devServer.uiUrl}`);
  } else {
    console.log(`Temporal: ${address}`);
  }

  const services = buildServices(cfg, database, env);
  stops.push(() => services.close());
  const worker = await startWorkerRuntime(services, { address, role: 'embedded' });
  stops.push(() => worker.stop());
  // The same split as in production: the API part sees public material only, never the seed or the key.
  // It runs in a thread of its own, so that requests never queue behind the worker's activities, watchers
  // and PGlite on the main thread (EMBEDDED_API=process keeps it there, as before, for comparison).
  // The main thread loads the API's modules (Express, the OpenAPI document, the schemas) only when it serves it.
  const api = apiThread
    ? await apiThread.start(database, env)
    : // eslint-disable-next-line @typescript-eslint/no-require-imports
      await (require('./runtime/api') as typeof import('./runtime/api')).startApiRuntime(apiPart(services));
  stops.push(() => api.stop());
  if (cfg.metricsPort !== undefined) {
    const metrics = await startMetricsServer(cfg.host, cfg.metricsPort, 'metrics' in api ? [() => api.metrics()] : []);
    stops.push(() => metrics.close());
    console.log(`metrics: http://${cfg.host}:${metrics.port}/metrics`);
  }
  console.log(`API: ${api.url}`);
  console.log('gateway ready');
}

main(configOrExit()).catch((e) => {
  console.error('gateway failed to start:', e instanceof Error ? e.message : e);
  void shutdown('start-up failed', 1);
});
