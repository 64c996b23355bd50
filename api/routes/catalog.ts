import { Router } from 'express';
import { z } from 'zod';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { routeAssetViews } from '../asset-cache';
import { confirmationsRequired, isServed, minimumText, type AssetView } from '../assets';
import { cachedBody, sendCached, type CachedBody } from '../cached-body';
import type { PublicDeps } from '../deps';
import { DecimalString, errorResponses } from '../schemas';

/** SPEC 4.4 / 2.1: the enabled assets of configured networks, keyed by canonical ticker. */

export const CatalogEntry = z
  .strictObject({
    name: z.string().meta({ description: 'Display name' }),
    ticker: z.string().meta({ description: 'Canonical ticker' }),
    minimum: DecimalString.nullable().meta({
      description: 'Current processing minimum; null while unavailable (no current fee estimate or price): never substitute 0 or a guess',
    }),
    decimals: z.int(),
    type: z.enum(['native', 'token']),
    asset_name: z.string(),
    symbol: z.string(),
    network_name: z.string(),
    confirmations_required: z.int().meta({ description: 'Confirmations or finality requirement; 1 for the sol family' }),
  })
  .meta({ id: 'CatalogEntry' });

export const CatalogResponse = z.record(z.string(), CatalogEntry).meta({ id: 'Catalog' });

function catalogBody(views: AssetView[]): string {
  const out: Record<string, z.infer<typeof CatalogEntry>> = {};
  for (const v of views.filter(isServed)) {
    out[v.asset.ticker] = {
      name: v.asset.name,
      ticker: v.asset.ticker,
      minimum: minimumText(v),
      decimals: v.asset.decimals,
      type: v.asset.type,
      asset_name: v.asset.name,
      symbol: v.asset.symbol,
      network_name: v.network.name,
      confirmations_required: confirmationsRequired(v),
    };
  }
  return JSON.stringify(out);
}

/** The body of one list of views, built once: a cached list is served as the same bytes. */
const bodies = new WeakMap<AssetView[], CachedBody>();

export function catalogRoutes(deps: PublicDeps, r: Router = Router()): Router {
  r.get('/api/cryptocurrencies', async (_req, res) => {
    const views = await routeAssetViews(deps);
    let body = bodies.get(views);
    if (body === undefined) bodies.set(views, (body = cachedBody(catalogBody(views))));
    sendCached(res, body);
  });
  return r;
}

export function registerCatalogOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/cryptocurrencies',
    summary: 'List enabled assets',
    description: 'Assets that are enabled and whose network this gateway serves, keyed by canonical ticker.',
    responses: { 200: { description: 'Catalog', content: { 'application/json': { schema: CatalogResponse } } }, ...errorResponses([]) },
  });
}
