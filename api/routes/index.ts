import { Router } from 'express';
import type { PublicDeps } from '../deps';
import { catalogRoutes } from './catalog';
import { createRoutes } from './create';
import { infoRoutes } from './info';
import { logsRoutes } from './logs';
import { openapiRoutes } from './openapi';
import { pricingRoutes } from './pricing';
import { pubkeyRoutes } from './pubkey';
import { qrcodeRoutes } from './qrcode';

export type { PublicDeps } from '../deps';

/**
 * Registers every public route (SPEC 4) on `r`: createApp({ routes: [(r) => publicRoutes(deps, r)] }) puts
 * them on the application's own router. Fixed paths come before /api/:ticker/…. One router, not one per
 * group: each mounted router is a nested dispatch that every request walks through
 * (docs/decisions/0014-api-router-and-request-log.md).
 */
export function publicRoutes(deps: PublicDeps, r: Router = Router()): Router {
  openapiRoutes(r);
  pubkeyRoutes(deps, r);
  pricingRoutes(r);
  catalogRoutes(deps, r);
  infoRoutes(deps, r);
  logsRoutes(deps, r);
  qrcodeRoutes(deps, r);
  createRoutes(deps, r);
  return r;
}
