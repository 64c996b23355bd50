import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../api/app';
import { requestLogger, setLogSink } from '../../src/observability/logger';
import { observeRequests } from '../../src/observability/request-log';

/**
 * The request log the API process writes (src/runtime/api.ts): through requestLogger, which skips the
 * redact pass, so its lines must hold only the fields observeRequests names, whatever the request carries.
 */
describe('request log lines', () => {
  const lines: string[] = [];
  let previous: ReturnType<typeof setLogSink>;
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    previous = setLogSink({ write: (line) => void lines.push(line) });
    const app = createApp({
      before: [observeRequests(requestLogger)],
      routes: [(r) => r.get('/api/echo', (_req, res) => void res.json({ ok: true }))],
      log: () => undefined,
    });
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    setLogSink(previous);
    await new Promise<void>((r) => server.close(() => r()));
  });

  /** The parsed line of the request with this ID, once written (after the response). */
  async function lineOf(id: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 100; i++) {
      const line = lines.find((l) => l.includes(`"${id}"`));
      if (line) return JSON.parse(line) as Record<string, unknown>;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no log line for ${id}`);
  }

  it('names the request, its status and time, and nothing it carried', async () => {
    const res = await fetch(`${base}/api/echo?callback=https%3A%2F%2Fshop.example%2Fcb%3Ftoken%3Dt0k3n&mnemonic=abandon`, {
      headers: { 'X-Request-Id': 'req-log-1', authorization: 'Bearer s3cr3t', cookie: 'session=c00k13' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('req-log-1');
    const line = await lineOf('req-log-1');
    expect(Object.keys(line).sort()).toEqual(['level', 'msg', 'req', 'res', 'responseTime', 'service', 'time']);
    expect(line).toMatchObject({ level: 30, msg: 'request completed', service: 'gateway', req: { id: 'req-log-1', method: 'GET', path: '/api/echo' }, res: { status: 200 } });
    expect(typeof line.responseTime).toBe('number');
    const raw = lines.find((l) => l.includes('"req-log-1"'))!;
    for (const secret of ['t0k3n', 'abandon', 's3cr3t', 'c00k13', 'callback']) expect(raw).not.toContain(secret);
  });

  it('replaces a request ID that is not a plain token, and logs an unknown route under its path', async () => {
    const res = await fetch(`${base}/api/nowhere`, { headers: { 'X-Request-Id': '"}{"injected":true' } });
    expect(res.status).toBe(404);
    const id = res.headers.get('x-request-id')!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const line = await lineOf(id);
    expect(line).toMatchObject({ req: { id, method: 'GET', path: '/api/nowhere' }, res: { status: 404 } });
    expect(line).not.toHaveProperty('injected');
  });
});
