import { Router } from 'express';
import { z } from 'zod';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { PublicDeps } from '../deps';
import { errorResponses } from '../schemas';

/** SPEC 4.3: the signer's current public key, read live on every request. */

export const NOT_CONFIGURED = 'Public key not configured.';

export function pubkeyRoutes(deps: PublicDeps, r: Router = Router()): Router {
  r.get('/api/pubkey', async (_req, res) => {
    const pem = await deps.getPublicKeyPem();
    res.type('text/plain; charset=utf-8').set('Cache-Control', 'no-store');
    // Not configured: the spec's text, with 503 so that a client never mistakes it for a key.
    if (pem === undefined || pem.trim() === '') res.status(503).send(NOT_CONFIGURED);
    else res.send(pem);
  });
  return r;
}

export function registerPubkeyOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/pubkey',
    summary: 'Callback signature public key',
    description: 'The current RSA public key (PEM) that verifies X-Gateway-Signature.',
    responses: {
      200: { description: 'PEM public key', content: { 'text/plain': { schema: z.string().meta({ example: '-----BEGIN PUBLIC KEY-----\n…' }) } } },
      503: { description: `No key configured; the body is "${NOT_CONFIGURED}"`, content: { 'text/plain': { schema: z.literal(NOT_CONFIGURED) } } },
      ...errorResponses([]),
    },
  });
}
