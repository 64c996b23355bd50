import { ethersKeccakInWasm } from '../addresses/public-child';
import { loadConfig, ConfigError, type Config } from '../config';
import { openPostgres, type Database } from '../db/client';
import { logger } from '../observability/logger';
import { startMetricsServer } from '../observability/metrics';

/** The configuration, or exit 2 with the one-line message naming the variable and the rule. */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(2);
    }
    throw e;
  }
}

/** Separate processes share state only through PostgreSQL and Temporal, so both must be named. */
export function productionConfig(role: string): Config {
  const cfg = configOrExit();
  for (const [name, value] of [['DATABASE_URL', cfg.databaseUrl], ['TEMPORAL_ADDRESS', cfg.temporalAddress]] as const) {
    if (!value) {
      console.error(`invalid configuration: ${name} must be set for the ${role} process (npm start runs the embedded default instead)`);
      process.exit(2);
    }
  }
  return cfg;
}

/** SIGINT/SIGTERM run the stops newest first; a hung stop cannot keep the process past 10 s. */
export function onShutdown(stops: Array<() => Promise<void>>): void {
  let stopping = false;
  const run = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    setTimeout(() => process.exit(1), 9_500).unref();
    for (const stop of [...stops].reverse()) await stop().catch((e) => logger.error({ err: String(e) }, 'stop failed'));
    process.exit(0);
  };
  process.on('SIGINT', () => void run('SIGINT'));
  process.on('SIGTERM', () => void run('SIGTERM'));
}

/**
 * The frame of a production process: config (PostgreSQL and Temporal required), shutdown on signals,
 * database, shared services, /metrics on METRICS_PORT; `start` adds the role's own parts.
 */
export function runProcess<S>(
  role: string,
  build: (cfg: Config, database: Database) => S & { close?: () => Promise<void> },
  start: (services: S, stops: Array<() => Promise<void>>) => Promise<Record<string, unknown>>,
  opts: { migrate?: boolean | 'if-permitted' } = {},
): void {
  const main = async () => {
    const cfg = productionConfig(role);
    await ethersKeccakInWasm();
    const stops: Array<() => Promise<void>> = [];
    onShutdown(stops);
    const database = await openPostgres(cfg.databaseUrl!, { migrate: opts.migrate });
    stops.push(() => database.close());
    const services = build(cfg, database);
    if (services.close) stops.push(services.close);
    const ready = await start(services, stops);
    if (cfg.metricsPort !== undefined) {
      const metrics = await startMetricsServer(cfg.host, cfg.metricsPort);
      stops.push(() => metrics.close());
      logger.info({ url: `http://${cfg.host}:${metrics.port}/metrics` }, 'metrics');
    }
    logger.info(ready, `${role} ready`);
  };
  main().catch((e) => {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(2);
    }
    logger.fatal({ err: e instanceof Error ? e.message : String(e) }, `${role} failed to start`);
    process.exit(1);
  });
}
