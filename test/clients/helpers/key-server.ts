import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createApp } from '../../../api/app';
import type { PublicDeps } from '../../../api/deps';
import { pubkeyRoutes } from '../../../api/routes/pubkey';

export type Served = 'right' | 'wrong' | 'none';

/**
 * The gateway's real GET /api/pubkey route, three times over: under /right/{id} it serves the signing key,
 * under /wrong/{id} another key, under /none/{id} "Public key not configured." (503). Fetches are counted
 * per prefix, so each verifier's refetches can be checked.
 */
export async function startKeyServer(keys: { right: string; wrong: string }) {
  const fetches = new Map<string, number>();
  const outer = express();
  for (const served of ['right', 'wrong', 'none'] as const) {
    const pem = served === 'none' ? undefined : keys[served];
    // pubkeyRoutes only reads getPublicKeyPem.
    const gateway = createApp({ routes: [(r) => pubkeyRoutes({ getPublicKeyPem: async () => pem } as PublicDeps, r)] });
    outer.use(`/${served}/:id`, (req, _res, next) => {
      const prefix = req.originalUrl.split('/').slice(0, 3).join('/');
      fetches.set(prefix, (fetches.get(prefix) ?? 0) + 1);
      next();
    }, gateway);
  }
  const server = http.createServer(outer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    gatewayUrl: (served: Served, id: string) => `${base}/${served}/${id}`,
    fetchesOf: (served: Served, id: string) => fetches.get(`/${served}/${id}`) ?? 0,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
