import http from 'node:http';
import { createApp } from '../../api/app';
import { createApiServer } from '../../api/server';
import { publicRoutes } from '../../api/routes';
import { AssetStateCache } from '../../api/asset-cache';
import { LOGS_CHANNEL, LogsCache } from '../../api/logs-cache';
import { logger, requestLogger } from '../observability/logger';
import { observeRequests } from '../observability/request-log';
import { describeError } from '../observability/redact';
import type { ApiServices } from './services';

export interface ApiRuntime {
  url: string;
  server: http.Server;
  stop(): Promise<void>;
}

/** The public API process part: Express on HOST:PORT, graceful close (in-flight requests finish). */
export async function startApiRuntime(services: ApiServices, opts: { port?: number } = {}): Promise<ApiRuntime> {
  const { cfg, database } = services;
  // With a PostgreSQL server, GET /logs bodies are kept while its notices say they hold (api/logs-cache.ts).
  const logsCache = database.listen ? new LogsCache().attach((hearer) => database.listen!(LOGS_CHANNEL, hearer)) : undefined;
  const app = createApp({
    before: [observeRequests(requestLogger)],
    routes: [(r) => publicRoutes({
      db: services.database.db,
      addresses: services.material,
      chains: services.chains,
      config: cfg,
      getPublicKeyPem: () => services.material.publicKeyPem(),
      assetCache: new AssetStateCache(services.database.db),
      logsCache,
    }, r)],
    log: (msg, err) => logger.error({ err: describeError(err) }, msg),
    trustProxy: cfg.trustProxy,
  });
  const server = createApiServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? cfg.port, cfg.host, () => resolve());
  }).catch(async (e: unknown) => {
    await logsCache?.close();
    throw e;
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${cfg.host}:${port}/api`,
    server,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await logsCache?.close();
    },
  };
}
