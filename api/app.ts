import express, { type Express, type Router } from 'express';
import { errorHandler, notFound, type LogFn } from './errors';
import { statusRoutes } from './routes/status';

export interface AppDeps {
  log?: LogFn;
  /** Further route groups (catalog, create, logs, …) mounted before the 404 handler. */
  routes?: Router[];
}

export function createApp(deps: AppDeps = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(statusRoutes());
  for (const r of deps.routes ?? []) app.use(r);
  app.use(notFound);
  app.use(errorHandler(deps.log ?? ((msg, err) => console.error(msg, err))));
  return app;
}
