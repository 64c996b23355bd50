import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { registerCatalogOpenApi } from './routes/catalog';
import { registerCreateOpenApi } from './routes/create';
import { registerInfoOpenApi } from './routes/info';
import { registerLogsOpenApi } from './routes/logs';
import { registerPricingOpenApi } from './routes/pricing';
import { registerPubkeyOpenApi } from './routes/pubkey';
import { registerQrcodeOpenApi } from './routes/qrcode';

/** The OpenAPI 3.1 document, generated from the same zod schemas the routes parse and answer with. */
export function buildOpenApiDocument(opts: { serverUrl?: string } = {}): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.registerPath({
    method: 'get',
    path: '/api',
    summary: 'Status marker',
    responses: { 200: { description: 'OK', content: { 'application/json': { schema: z.object({ status: z.literal('OK') }) } } } },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/health',
    summary: 'Liveness',
    responses: { 200: { description: 'ok', content: { 'application/json': { schema: z.object({ status: z.literal('ok') }) } } } },
  });
  registerCatalogOpenApi(registry);
  registerInfoOpenApi(registry);
  registerCreateOpenApi(registry);
  registerLogsOpenApi(registry);
  registerQrcodeOpenApi(registry);
  registerPubkeyOpenApi(registry);
  registerPricingOpenApi(registry);
  registry.registerPath({
    method: 'get',
    path: '/api/openapi.json',
    summary: 'This document',
    responses: { 200: { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } } },
  });
  const generator = new OpenApiGeneratorV31(registry.definitions);
  const doc = generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Crypto payment gateway API',
      version: 'v1',
      description:
        'Public merchant API: asset discovery, payment configurations, logs and the callback public key. ' +
        'Every non-2xx response is a JSON error body (see the Error schema) except GET /api/pubkey, which is text/plain. ' +
        'Unknown routes and methods answer 404 with code 1002.',
    },
    servers: opts.serverUrl ? [{ url: opts.serverUrl }] : undefined,
  });
  return doc;
}
