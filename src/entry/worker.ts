// Worker-only process (compose service gateway-worker): Temporal worker and per-network watchers.
// Several may run at once on the same task queue: deposit workflows are unique by ID and forwards
// are serialised by a PostgreSQL advisory lock.
import { openPostgres } from '../db/client';
import { logger } from '../observability/logger';
import { startMetricsServer } from '../observability/metrics';
import { buildServices } from '../runtime/services';
import { startWorkerRuntime } from '../runtime/worker';
import { installQuietRuntime } from '../temporal/worker';
import { onShutdown, productionConfig } from './common';

async function main(): Promise<void> {
  installQuietRuntime();
  const cfg = productionConfig('worker');
  const stops: Array<() => Promise<void>> = [];
  onShutdown(stops);
  const database = await openPostgres(cfg.databaseUrl!);
  stops.push(() => database.close());
  const services = buildServices(cfg, database);
  stops.push(() => services.close());
  const worker = await startWorkerRuntime(services, {
    address: cfg.temporalAddress!,
    depositPollInterval: process.env.DEPOSIT_POLL_INTERVAL || undefined,
  });
  stops.push(() => worker.stop());
  if (cfg.metricsPort !== undefined) {
    const metrics = await startMetricsServer(cfg.host, cfg.metricsPort);
    stops.push(() => metrics.close());
    logger.info({ url: `http://${cfg.host}:${metrics.port}/metrics` }, 'metrics');
  }
  logger.info({ networks: Object.keys(services.chains), taskQueue: cfg.taskQueue }, 'worker ready');
}

main().catch((e) => {
  logger.fatal({ err: e instanceof Error ? e.message : String(e) }, 'worker failed to start');
  process.exit(1);
});
