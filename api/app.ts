import express, { type Express, type RequestHandler, type Router } from 'express';
import { errorHandler, notFound, type LogFn } from './errors';
import { refuseOptions } from './request-errors';
import { closeUnread } from './server';
import { describeError } from '../src/observability/redact';
import { statusRoutes } from './routes/status';

export interface AppDeps {
  log?: LogFn;
  /**
   * Route groups (catalog, create, logs, …), each a function that registers its routes on the router it is
   * given, before the 404 handler.
   */
  routes?: Array<(r: Router) => unknown>;
  /** Middleware run before every route (request metrics). */
  before?: RequestHandler[];
  /** Express's `trust proxy` (TRUST_PROXY): whose X-Forwarded-For names the client; unset trusts none. */
  trustProxy?: number | string;
}

export function createApp(deps: AppDeps = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  if (deps.trustProxy !== undefined) app.set('trust proxy', deps.trustProxy);
  app.use(closeUnread);
  for (const m of deps.before ?? []) app.use(m);
  app.use(refuseOptions);
  // Registered on the application's own router: a route group mounted with use() costs every request a nested
  // router dispatch (docs/decisions/0014-api-router-and-request-log.md).
  statusRoutes(app.router);
  for (const mount of deps.routes ?? []) mount(app.router);
  app.use(notFound);
  app.use(errorHandler(deps.log ?? ((msg, err) => console.error(msg, describeError(err)))));
  return app;
}
