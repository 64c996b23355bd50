// API-only process (compose service gateway-api): public HTTP API and /metrics; no worker, no watchers.
import { openPostgres } from '../db/client';
import { logger } from '../observability/logger';
import { startMetricsServer } from '../observability/metrics';
import { startApiRuntime } from '../runtime/api';
import { buildServices } from '../runtime/services';
import { onShutdown, productionConfig } from './common';

async function main(): Promise<void> {
  const cfg = productionConfig('API');
  const stops: Array<() => Promise<void>> = [];
  onShutdown(stops);
  const database = await openPostgres(cfg.databaseUrl!);
  stops.push(() => database.close());
  const services = buildServices(cfg, database);
  stops.push(() => services.close());
  const api = await startApiRuntime(services);
  stops.push(() => api.stop());
  if (cfg.metricsPort !== undefined) {
    const metrics = await startMetricsServer(cfg.host, cfg.metricsPort);
    stops.push(() => metrics.close());
    logger.info({ url: `http://${cfg.host}:${metrics.port}/metrics` }, 'metrics');
  }
  logger.info({ url: api.url }, 'API ready');
}

main().catch((e) => {
  logger.fatal({ err: e instanceof Error ? e.message : String(e) }, 'API failed to start');
  process.exit(1);
});
