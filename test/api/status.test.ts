import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Router } from 'express';
import { createApp } from '../../api/app';

async function serve(routes: Array<(r: Router) => unknown> = []) {
  const logged: unknown[] = [];
  const server = http.createServer(createApp({ routes, log: (_m, e) => logged.push(e) }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, logged, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('status endpoints and error shape', () => {
  it('GET /api and /api/health', async () => {
    const s = await serve();
    try {
      const a = await fetch(`${s.base}/api`);
      expect(a.status).toBe(200);
      expect(await a.json()).toEqual({ status: 'OK' });
      const h = await fetch(`${s.base}/api/health`);
      expect(h.status).toBe(200);
      expect(await h.json()).toEqual({ status: 'ok' });
    } finally {
      await s.close();
    }
  });

  it.each([
    ['GET', '/api/does-not-exist'],
    ['GET', '/'],
    ['DELETE', '/api'],
    ['POST', '/api/health'],
  ])('%s %s → 404 with code 1002', async (method, p) => {
    const s = await serve();
    try {
      const r = await fetch(`${s.base}${p}`, { method });
      expect(r.status).toBe(404);
      const body = (await r.json()) as { message: unknown };
      expect(body).toMatchObject({ status: 'error', code: 1002, error: 'ENDPOINT_NOT_FOUND' });
      expect(typeof body.message).toBe('string');
    } finally {
      await s.close();
    }
  });

  it('an unexpected error → 500, code 1501, with no internals in the body', async () => {
    const boom = (r: Router) =>
      r.get('/api/boom', () => {
        throw new Error('secret internals: connection string postgres://u:hunter2@db');
      });
    const s = await serve([boom]);
    try {
      const r = await fetch(`${s.base}/api/boom`);
      expect(r.status).toBe(500);
      const text = await r.text();
      expect(JSON.parse(text)).toEqual({
        status: 'error',
        code: 1501,
        error: 'INTERNAL_GATEWAY_ERROR',
        message: 'Internal error. Retry later.',
      });
      expect(text).not.toMatch(/hunter2|secret|stack|at /);
      expect(s.logged).toHaveLength(1);
    } finally {
      await s.close();
    }
  });
});
