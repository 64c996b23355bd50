import http from 'node:http';
import zlib from 'node:zlib';
import { sql } from 'drizzle-orm';
import { describeError } from '../../src/observability/redact';
import { callCreate, merchantAddress, startApi, type TestApi } from './helpers';

/** Inputs that once answered 500 or were wrongly accepted: each gets the spec's error body with a 4xx (SPEC 4, 7). */

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

let n = 0;
const callback = () => `https://shop.example/cb?order=h${++n}`;

/** A raw request, so that the body goes out byte for byte with the given headers. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: Buffer) {
  return new Promise<{ status: number; body: Record<string, unknown> & { errors?: Record<string, string[]> } }>((resolve, reject) => {
    const req = http.request(api.base + path, { method, headers: body ? { ...headers, 'content-length': String(body.length) } : headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const validationFailed = (field: string) => ({ status: 'error', code: 1001, error: 'VALIDATION_FAILED', errors: { [field]: expect.any(Array) } });

describe('logs: a callback the database cannot hold', () => {
  it.each([
    ['NUL', '%00'],
    ['NUL inside a URL', encodeURIComponent('https://shop.example/cb?order=1\u0000')],
    ['a line feed', encodeURIComponent('https://shop.example/cb?order=1\n')],
  ])('%s → 422 1001 errors.callback, nothing logged', async (_name, q) => {
    const r = await api.json(`/api/btc/logs?callback=${q}`);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject(validationFailed('callback'));
    expect(api.logged).toEqual([]);
  });

  it('a database error is logged without its parameters, URLs or query strings', async () => {
    const url = 'https://shop.example/secret-path?order=77&token=abc';
    let thrown: unknown;
    try {
      // A real drizzle error from the real server: NUL is refused in text, and the message repeats the parameters.
      await api.db.execute(sql`SELECT ${`${url}\u0000`}::text`);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect(String((thrown as Error).message)).toContain('secret-path'); // what would have leaked
    const logged = JSON.stringify(describeError(thrown));
    expect(logged).not.toMatch(/secret-path|order=77|token|shop\.example/);
    expect(describeError(thrown)).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    expect(JSON.stringify(describeError(new Error(`fetch ${url} failed`)))).not.toMatch(/shop\.example|order=77|token=abc/);
  });
});

describe('create: a body that does not match its Content-Encoding', () => {
  const body = Buffer.from(JSON.stringify({ callback_url: 'https://shop.example/cb?order=z', address_out: merchantAddress('bitcoin') }));
  it.each([
    ['gzip', Buffer.from('this is not gzip at all')],
    ['gzip', zlib.gzipSync(body).subarray(0, 20)],
    ['deflate', Buffer.from('not deflate either')],
    ['br', Buffer.from('not brotli, not at all, no')],
  ])('%s with a corrupt body → 422 1001 errors.body', async (encoding, bytes) => {
    const r = await raw('POST', '/api/btc/create', { 'content-type': 'application/json', 'content-encoding': encoding }, bytes);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject(validationFailed('body'));
    expect(api.logged).toEqual([]);
  });

  it('a correct gzip body is still accepted', async () => {
    const ok = Buffer.from(JSON.stringify({ callback_url: callback(), address_out: merchantAddress('bitcoin') }));
    const r = await raw('POST', '/api/btc/create', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, zlib.gzipSync(ok));
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
  });
});

describe('a ticker that is not valid percent-encoding', () => {
  it.each(['/api/%ff/info', '/api/%ff/logs?callback=x', '/api/%E0%A4%A/create', '/api/erc20/%ff/create', '/api/%/info'])('%s → 422 1101', async (path) => {
    const r = await raw('GET', path);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ status: 'error', code: 1101, error: 'UNSUPPORTED_CURRENCY' });
  });
});

describe('methods a route does not serve', () => {
  it.each(['/api', '/api/health', '/api/cryptocurrencies', '/api/btc/info', '/api/btc/create', '/api/erc20/usdt/create', '/api/btc/logs', '/api/nope'])(
    'OPTIONS %s → 404 1002',
    async (path) => {
      const r = await raw('OPTIONS', path);
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ status: 'error', code: 1002, error: 'ENDPOINT_NOT_FOUND' });
    },
  );

  it.each([
    ['PUT', '/api/btc/create'],
    ['DELETE', '/api/btc/info'],
    ['PATCH', '/api/cryptocurrencies'],
    ['POST', '/api/btc/logs'],
  ])('%s %s → 404 1002', async (method, path) => {
    const r = await raw(method, path);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ code: 1002 });
  });
});

describe('create: payout and callback rules', () => {
  it.each([
    ['the System Program', '11111111111111111111111111111111'],
    ['a sysvar (Clock)', 'SysvarC1ock11111111111111111111111111111111'],
    ['a sysvar (Rent)', 'SysvarRent111111111111111111111111111111111'],
    ['the Token program', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'],
  ])('Solana address_out = %s → 1001 errors.address_out', async (_name, address) => {
    for (const ticker of ['sol', 'sol_usdc']) {
      const r = await callCreate(api, `/api/${ticker}/create`, 'POST JSON', { callback_url: callback(), address_out: address });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject(validationFailed('address_out'));
    }
  });

  it.each([
    ['empty credentials', 'https://:@shop.example/cb?order=c'],
    ['an empty user', 'https://@shop.example/cb?order=c'],
    ['a user only', 'https://user@shop.example/cb?order=c'],
    ['port 0', 'https://shop.example:0/cb?order=c'],
    ['port 00', 'https://shop.example:00/cb?order=c'],
  ])('callback_url with %s → 1001 errors.callback_url', async (_name, url) => {
    const r = await callCreate(api, '/api/btc/create', 'GET query', { callback_url: url.replace('order=c', `order=c${++n}`), address_out: merchantAddress('bitcoin') });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject(validationFailed('callback_url'));
  });

  it('a callback_url with an ordinary port is still accepted', async () => {
    const r = await callCreate(api, '/api/btc/create', 'GET query', { callback_url: `https://shop.example:8443/cb?order=p${++n}`, address_out: merchantAddress('bitcoin') });
    expect(r.status).toBe(200);
  });
});

describe('odd inputs never reach a 5xx', () => {
  const nul = encodeURIComponent('\u0000');
  it.each([
    ['GET', `/api/btc/logs?callback=%ff`],
    ['GET', `/api/btc/logs?callback=${'a'.repeat(5000)}`],
    ['GET', `/api/btc/logs?callback=x&callback=y`],
    ['GET', `/api/btc/create?callback_url=${nul}&address_out=${nul}`],
    ['GET', `/api/sol/create?callback_url=https%3A%2F%2Fshop.example%2Fcb${nul}&address_out=1111111111111111111111111111111${nul}`],
    ['GET', `/api/eth/create?callback_url=https%3A%2F%2Fshop.example%2Fcb&address_out=0x${'0'.repeat(39)}${nul}`],
    ['GET', `/api/${nul}/info`],
    ['GET', `/api/btc${nul}/logs?callback=x`],
    ['GET', `/api/erc20/${nul}/create`],
    ['GET', '/api/%2e%2e/info'],
  ])('%s %s → 4xx with the spec body', async (method, path) => {
    const r = await raw(method, path);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.body).toMatchObject({ status: 'error', code: expect.any(Number), error: expect.any(String), message: expect.any(String) });
    expect(api.logged).toEqual([]);
  });

  it('a JSON body with NUL in every field → 1001', async () => {
    const r = await raw('POST', '/api/btc/create', { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ callback_url: 'https://shop.example/\u0000', address_out: '\u0000' })));
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 1001, errors: { callback_url: expect.any(Array), address_out: expect.any(Array) } });
  });
});
