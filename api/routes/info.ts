import { Router } from 'express';
import { z } from 'zod';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { tickerFromPath } from '../../src/domain/assets';
import { formatUnits } from '../../src/domain/money';
import { routeAsset } from '../asset-cache';
import { confirmationsRequired, type AssetView } from '../assets';
import { cachedBody, sendCached, type CachedBody } from '../cached-body';
import type { PublicDeps } from '../deps';
import { DecimalString, TickerParams, errorResponses } from '../schemas';

/** SPEC 4.5 / 2.2: one asset's public facts. */

export const InfoResponse = z
  .strictObject({
    ticker: z.string(),
    status: z.literal('active'),
    minimum_transaction: DecimalString.meta({
      description: 'Current minimum; while no current figure exists, the last computed one, else the registry floor',
    }),
    confirmations_required: z.int(),
    fee_percent: DecimalString.meta({ description: 'Default public fee percentage; a payment\'s actual percentage can differ' }),
  })
  .meta({ id: 'AssetInfo' });

function infoBody(v: AssetView): string {
  const body: z.infer<typeof InfoResponse> = {
    ticker: v.asset.ticker,
    status: 'active',
    minimum_transaction: formatUnits(v.minimumStated, v.asset.decimals),
    confirmations_required: confirmationsRequired(v),
    fee_percent: v.feePercent,
  };
  return JSON.stringify(body);
}

/** The body of one view, built once: a cached view is served as the same bytes. */
const bodies = new WeakMap<AssetView, CachedBody>();

export function infoRoutes(deps: PublicDeps, r: Router = Router()): Router {
  r.get('/api/:ticker/info', async (req, res) => {
    const v = await routeAsset(deps, tickerFromPath(req.params.ticker), { servedOnly: true });
    let body = bodies.get(v);
    if (body === undefined) bodies.set(v, (body = cachedBody(infoBody(v))));
    sendCached(res, body);
  });
  return r;
}

export function registerInfoOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/{ticker}/info',
    summary: 'Asset info',
    request: { params: TickerParams },
    responses: { 200: { description: 'Asset info', content: { 'application/json': { schema: InfoResponse } } }, ...errorResponses([1101, 1102]) },
  });
}
