import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { pinoHttp } from 'pino-http';
import { createApp } from '../../api/app';
import { publicRoutes } from '../../api/routes';
import { logger } from '../observability/logger';
import { describeError } from '../observability/redact';
import { httpMetrics } from '../observability/metrics';
import type { ApiServices } from './services';

export interface ApiRuntime {
  url: string;
  server: http.Server;
  stop(): Promise<void>;
}

/** The public API process part: Express on HOST:PORT, graceful close (in-flight requests finish). */
export async function startApiRuntime(services: ApiServices, opts: { port?: number } = {}): Promise<ApiRuntime> {
  const { cfg } = services;
  // One structured line per request with its request ID (X-Request-Id, echoed back); no bodies, no query
  // strings (a callback URL is the merchant's identity, not something to spread through logs).
  const requestLog = pinoHttp({
    logger,
    genReqId: (req, res) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, path: req.url.split('?')[0] }),
      res: (res: { statusCode: number }) => ({ status: res.statusCode }),
    },
  });
  const app = createApp({
    before: [requestLog, httpMetrics()],
    routes: publicRoutes({
      db: services.database.db,
      addresses: services.material,
      chains: services.chains,
      config: cfg,
      getPublicKeyPem: () => services.material.publicKeyPem(),
    }),
    log: (msg, err) => logger.error({ err: describeError(err) }, msg),
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? cfg.port, cfg.host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${cfg.host}:${port}/api`,
    server,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
