import { Router } from 'express';
import { z } from 'zod';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { PRICING_CURRENCY, PRICING_WINDOW_DAYS, publicTiers } from '../../src/domain/standard-tiers';
import { DecimalString, errorResponses } from '../schemas';

/** SPEC 4.8: the standard global rolling-volume fee schedule (path and shape are this gateway's choice). */

export const PricingResponse = z
  .strictObject({
    status: z.literal('success'),
    basis: z.literal('rolling_volume_per_callback_domain'),
    window_days: z.int().meta({ description: 'Length of the rolling window' }),
    currency: z.literal('USDT').meta({ description: 'Currency the volume is valued in' }),
    tiers: z
      .array(
        z.strictObject({
          from_volume_usdt: DecimalString.meta({ description: 'Inclusive lower bound of the rolling volume' }),
          to_volume_usdt: DecimalString.nullable().meta({ description: 'Exclusive upper bound; null for the last tier' }),
          fee_percent: DecimalString,
        }),
      )
      .meta({ description: 'Ascending; a contracted per-domain rate overrides the schedule' }),
  })
  .meta({ id: 'StandardPricing' });

export function pricingRoutes(r: Router = Router()): Router {
  r.get('/api/pricing/standard', (_req, res) => {
    const body: z.infer<typeof PricingResponse> = {
      status: 'success',
      basis: 'rolling_volume_per_callback_domain',
      window_days: PRICING_WINDOW_DAYS,
      currency: PRICING_CURRENCY,
      tiers: publicTiers(),
    };
    res.json(body);
  });
  return r;
}

export function registerPricingOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/pricing/standard',
    summary: 'Standard fee schedule',
    description: 'Fee percentage by rolling 30-day USDT volume of the callback domain.',
    responses: { 200: { description: 'Tiers', content: { 'application/json': { schema: PricingResponse } } }, ...errorResponses([]) },
  });
}
