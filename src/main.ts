import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { createApp } from '../api/app';
import { publicRoutes } from '../api/routes';
import { chainConfigFromEnv } from './chains/config';
import { HdSeed } from './chains/keys';
import { createActivities } from '../activities';
import { loadConfig, ConfigError, type Config } from './config';
import { openDatabase, type Database } from './db/client';
import { resolveTemporalCli } from './temporal/binaries';
import { startDevServer, type DevServer } from './temporal/devserver';
import { createWorker } from './temporal/worker';
import path from 'node:path';

/**
 * The embedded default: one process tree for the whole gateway. Migrations, the Temporal dev server
 * (unless TEMPORAL_ADDRESS points at one), the worker and the API.
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
  process.on('SIGINT', () => void shutdown('received SIGINT', 0));
  process.on('SIGTERM', () => void shutdown('received SIGTERM', 0));

  const database: Database = await openDatabase(cfg);
  stops.push(() => database.close());
  console.log(`database: ${database.kind === 'pglite' ? `embedded PGlite in ${path.join(cfg.dataDir, 'pglite')}` : 'PostgreSQL'} (migrations applied)`);

  let address = cfg.temporalAddress;
  let devServer: DevServer | undefined;
  if (!address) {
    const cli = resolveTemporalCli(cfg.temporalCliPath);
    if (!cli) throw new Error('no Temporal CLI found: run `node scripts/setup-temporal.js` or set TEMPORAL_CLI_PATH or TEMPORAL_ADDRESS');
    devServer = await startDevServer({
      cliPath: cli,
      host: cfg.host,
      dataDir: path.join(cfg.dataDir, 'temporal'),
      namespace: cfg.temporalNamespace,
      uiPort: cfg.temporalUiPort,
    });
    stops.push(() => devServer!.stop());
    address = devServer.address;
    console.log(`Temporal dev server: ${address} (pid ${devServer.pid})`);
    console.log(`Temporal UI: ${devServer.uiUrl}`);
  } else {
    console.log(`Temporal: ${address}`);
  }

  const { worker, connection: workerConnection } = await createWorker({
    address,
    namespace: cfg.temporalNamespace,
    taskQueue: cfg.taskQueue,
    activities: createActivities({ db: database.db }),
  });
  const workerRun = worker.run();
  stops.push(async () => {
    await shutdownWorker(worker, workerRun);
    await workerConnection.close();
  });

  const clientConnection = await Connection.connect({ address });
  stops.push(() => clientConnection.close());
  const client = new Client({ connection: clientConnection, namespace: cfg.temporalNamespace });
  void client;

  const seed = HdSeed.loadOrCreate({ mnemonic: cfg.mnemonic, mnemonicFile: cfg.mnemonicFile, dataDir: cfg.dataDir });
  const chains = chainConfigFromEnv(process.env);
  // The callback signer supplies this; until it is wired, GET /api/pubkey answers "Public key not configured.".
  const getPublicKeyPem = async (): Promise<string | undefined> => undefined;
  const app = createApp({ routes: publicRoutes({ db: database.db, seed, chains, config: cfg, getPublicKeyPem }) });
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.port, cfg.host, () => resolve());
  });
  stops.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  );
  console.log(`API: http://${cfg.host}:${cfg.port}/api`);
  console.log('gateway ready');
}

async function shutdownWorker(worker: Worker, run: Promise<void>): Promise<void> {
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await run;
}

let cfg: Config;
try {
  cfg = loadConfig();
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(e.message);
    process.exit(2);
  }
  throw e;
}
main(cfg).catch((e) => {
  console.error('gateway failed to start:', e instanceof Error ? e.message : e);
  void shutdown('start-up failed', 1);
});
