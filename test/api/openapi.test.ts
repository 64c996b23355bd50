import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { payments, deliveryAttempts } from '../../src/db/schema';
import { callCreate, merchantAddress, startApi, type TestApi } from './helpers';

/** The OpenAPI 3.1 document is served, complete, and real responses validate against it. */

let api: TestApi;
let doc: { openapi: string; paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };
let ajv: Ajv2020;

beforeAll(async () => {
  api = await startApi();
  const r = await api.get('/api/openapi.json');
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  doc = (await r.json()) as typeof doc;
  ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi.json' } as object);
});
afterAll(() => api.close());

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** Validates a real response against the documented schema of (path, method, status). */
async function expectDocumented(path: string, method: string, res: Response | { status: number; body: unknown }, contentType = 'application/json') {
  const status = String(res.status);
  const op = doc.paths[path]?.[method];
  expect(op).toBeDefined();
  expect(Object.keys(op.responses)).toContain(status);
  const body = res instanceof Response ? (contentType === 'application/json' ? await res.json() : await res.text()) : res.body;
  const validate = ajv.compile({ $ref: `openapi.json#/${pointer('paths', path, method, 'responses', status, 'content', contentType, 'schema')}` });
  const ok = validate(body);
  if (!ok) throw new Error(`${method} ${path} ${status}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`);
}

it('is OpenAPI 3.1 and documents every public operation', () => {
  expect(doc.openapi).toBe('3.1.0');
  const ops = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
  expect(ops.sort()).toEqual(
    [
      'GET /api',
      'GET /api/health',
      'GET /api/cryptocurrencies',
      'GET /api/{ticker}/info',
      'GET /api/{ticker}/create',
      'POST /api/{ticker}/create',
      'GET /api/{chain}/{token}/create',
      'POST /api/{chain}/{token}/create',
      'GET /api/{ticker}/logs',
      'GET /api/{ticker}/qrcode',
      'GET /api/pubkey',
      'GET /api/pricing/standard',
      'GET /api/openapi.json',
    ].sort(),
  );
  const create = doc.paths['/api/{ticker}/create'].post as unknown as { requestBody: { content: Record<string, unknown> } };
  expect(Object.keys(create.requestBody.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded']);
});

it('status, catalog, info and pricing responses match the document', async () => {
  await expectDocumented('/api', 'get', await api.get('/api'));
  await expectDocumented('/api/health', 'get', await api.get('/api/health'));
  await expectDocumented('/api/cryptocurrencies', 'get', await api.get('/api/cryptocurrencies'));
  await expectDocumented('/api/{ticker}/info', 'get', await api.get('/api/erc20_usdt/info'));
  await expectDocumented('/api/{ticker}/info', 'get', await api.get('/api/nope/info'));
  await expectDocumented('/api/pricing/standard', 'get', await api.get('/api/pricing/standard'));
  await expectDocumented('/api/pubkey', 'get', await api.get('/api/pubkey'), 'text/plain');
});

it('create responses (200, 422, 409) match the document on both routes', async () => {
  const ok = await callCreate(api, '/api/erc20/usdt/create', 'POST JSON', {
    callback_url: 'https://shop.example/oa',
    address_out: merchantAddress('ethereum'),
  });
  await expectDocumented('/api/{chain}/{token}/create', 'post', ok);
  await expectDocumented('/api/{ticker}/create', 'get', await callCreate(api, '/api/btc/create', 'GET query', { callback_url: 'x', address_out: 'y', pending: 5 }));
  await expectDocumented('/api/{ticker}/create', 'post', await callCreate(api, '/api/sol/create', 'POST form', {
    callback_url: 'https://shop.example/oa',
    address_out: merchantAddress('solana'),
  }));
  await expectDocumented('/api/{ticker}/create', 'post', await callCreate(api, '/api/sol/create', 'POST JSON', {
    callback_url: 'https://shop.example/oa-2',
    address_out: merchantAddress('solana'),
    priority: 'fast',
  }));
});

it('logs responses (200 with payments and attempts, 404) match the document', async () => {
  const cb = 'https://shop.example/oa-logs';
  await callCreate(api, '/api/btc/create', 'POST JSON', { callback_url: cb, address_out: merchantAddress('bitcoin') });
  const config = (await api.db.query.paymentConfigs.findMany()).find((c) => c.callbackUrl === cb)!;
  const [p] = await api.db
    .insert(payments)
    .values({ configId: config.id, ticker: 'btc', network: 'bitcoin', depositKey: 'deposit:bitcoin:dd:2', txidIn: 'dd'.repeat(32), vout: 2,
      valueBase: '5000', result: 'sent', price: '60000.50', lastUpdate: new Date() })
    .returning();
  await api.db.insert(deliveryAttempts).values({ paymentUuid: p.uuid, stage: 'confirmed', attempt: 1, requestUrl: cb, responseStatus: 500,
    responseBody: 'no', nextTry: new Date(), pending: 0, confirmed: 0 });
  await expectDocumented('/api/{ticker}/logs', 'get', await api.get(`/api/btc/logs?callback=${encodeURIComponent(cb)}`));
  await expectDocumented('/api/{ticker}/logs', 'get', await api.get(`/api/btc/logs?callback=${encodeURIComponent(cb + '/other')}`));
  await expectDocumented('/api/{ticker}/logs', 'get', await api.get('/api/btc/logs'));
});

it('the interactive reference and its assets are served locally', async () => {
  const page = await api.get('/api/docs');
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('swagger-ui');
  expect(html).not.toMatch(/https?:\/\//);
  for (const src of [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])) {
    const r = await api.get(src);
    expect([src, r.status]).toEqual([src, 200]);
  }
  expect(await (await api.get('/api/docs/init.js')).text()).toContain("url: '/api/openapi.json'");
  expect((await api.get('/api/docs/assets/package.json')).status).toBe(404);
  expect((await api.get('/api/docs/assets/../../package.json')).status).toBe(404);
});

it('the check is not vacuous: bodies that break the document are rejected', async () => {
  await expect(expectDocumented('/api/{ticker}/info', 'get', { status: 200, body: { ticker: 'btc', status: 'active' } })).rejects.toThrow();
  await expect(
    expectDocumented('/api/{ticker}/info', 'get', {
      status: 200,
      body: { ticker: 'btc', status: 'active', minimum_transaction: 0.1, confirmations_required: 2, fee_percent: '1.00' },
    }),
  ).rejects.toThrow();
  await expect(expectDocumented('/api/{ticker}/logs', 'get', { status: 404, body: { status: 'error', code: 9999, error: 'X', message: '' } })).rejects.toThrow();
});
