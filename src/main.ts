import path from 'node:path';
import { chainConfigFromEnv } from './chains/config';
import { startDevnets } from './chains/devnet';
import { settleNewLocalChains } from './chains/devnet/reset';
import { HdSeed } from './chains/keys';
import { ethersKeccakInWasm } from './chains/public-child';
import type { Config } from './config';
import { configOrExit } from './entry/common';
import { openDatabase } from './db/client';
import { SEARCH_ATTRIBUTE_CLI_TYPES } from './domain/search-attributes';
import { startMetricsServer } from './observability/metrics';
import { startApiRuntime } from './runtime/api';
import { startApiThread } from './runtime/api-thread';
import { apiPart, buildServices } from './runtime/services';
import { startWorkerRuntime } from './runtime/worker';
import { resolveTemporalCli } from './temporal/binaries';
import { reservePorts, startDevServer } from './temporal/devserver';
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
  installQuietRuntime(cfg);
  await ethersKeccakInWasm();
  process.on('SIGINT', () => void shutdown('received SIGINT', 0));
  process.on('SIGTERM', () => void shutdown('received SIGTERM', 0));

  const database = await openDatabase(cfg);
  stops.push(() => database.close());
  console.log(`database: ${database.kind === 'pglite' ? `embedded PGlite in ${path.join(cfg.dataDir, 'pglite')}` : 'PostgreSQL'} (migrations applied)`);

  const env = { ...process.env };
  const wantDevnet = cfg.devnet ?? Object.keys(chainConfigFromEnv(process.env)).length === 0;
  if (wantDevnet) {
    reservePorts(cfg.port, cfg.temporalUiPort, cfg.metricsPort);
    const seed = HdSeed.loadOrCreate({ mnemonic: cfg.mnemonic, mnemonicFile: cfg.mnemonicFile, dataDir: cfg.dataDir });
    const devnets = await startDevnets(path.join(cfg.dataDir, 'devnet'), { seed });
    stops.push(() => devnets.stop());
    Object.assign(env, devnets.env);
    for (const line of await settleNewLocalChains(database.db, devnets.newChains)) console.log(line);
    console.log(`local chains: ${Object.keys(chainConfigFromEnv(env)).join(', ')} (npm run devnet -- pay|mine …)`);
  }

  let address = cfg.temporalAddress;
  if (!address) {
    const cli = resolveTemporalCli(cfg.temporalCliPath);
    if (!cli) throw new Error('no Temporal CLI found: run `node scripts/setup-temporal.js` or set TEMPORAL_CLI_PATH or TEMPORAL_ADDRESS');
    const devServer = await startDevServer({
      cliPath: cli,
      host: cfg.host,
      dataDir: path.join(cfg.dataDir, 'temporal'),
      namespace: cfg.temporalNamespace,
      uiPort: cfg.temporalUiPort,
      searchAttributes: SEARCH_ATTRIBUTE_CLI_TYPES,
      logLevel: cfg.temporalServerLogLevel,
    });
    stops.push(() => devServer.stop());
    address = devServer.address;
    console.log(`Temporal dev server: ${address} (pid ${devServer.pid})`);
    console.log(`Temporal UI: ${devServer.uiUrl}`);
  } else {
    console.log(`Temporal: ${address}`);
  }

  const services = buildServices(cfg, database, env);
  stops.push(() => services.close());
  const worker = await startWorkerRuntime(services, { address });
  stops.push(() => worker.stop());
  // The same split as in production: the API part sees public material only, never the seed or the key.
  // It runs in a thread of its own, so that requests never queue behind the worker's activities, watchers
  // and PGlite on the main thread (EMBEDDED_API=process keeps it there, as before, for comparison).
  const api = cfg.embeddedApi === 'process' ? await startApiRuntime(apiPart(services)) : await startApiThread(database, env);
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
