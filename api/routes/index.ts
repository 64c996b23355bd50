import type { Router } from 'express';
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

/** Every public route group (SPEC 4), to pass to createApp({ routes }). Fixed paths come before /api/:ticker/…. */
export function publicRoutes(deps: PublicDeps): Router[] {
  return [
    openapiRoutes(),
    pubkeyRoutes(deps),
    pricingRoutes(),
    catalogRoutes(deps),
    infoRoutes(deps),
    logsRoutes(deps),
    qrcodeRoutes(deps),
    createRoutes(deps),
  ];
}
