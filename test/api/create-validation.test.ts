import { sql } from 'drizzle-orm';
import { TRANSPORTS, callCreate, merchantAddress, startApi, type TestApi } from './helpers';

/** SPEC 4.6 field rules and the error table, table-driven over all three transports. */

const OK = { callback_url: 'https://shop.example/cb?order=1', address_out: merchantAddress('bitcoin') };
const ETH_OUT = merchantAddress('ethereum');

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

let n = 0;
/** A fresh callback per call so that no earlier configuration answers instead of the validator. */
const fresh = (p: Record<string, unknown>) => ({ ...p, callback_url: String(p.callback_url).replace('order=1', `order=${++n}`) });

const long = (len: number) => {
  const head = 'https://shop.example/cb?order=1&pad=';
  return head + 'a'.repeat(len - head.length);
};
const pairs = (count: number) => `https://shop.example/cb?order=1&${Array.from({ length: count - 1 }, (_, i) => `k${i}=v`).join('&')}`;

// [case, params, field expected in errors]
const INVALID: Array<[string, Record<string, unknown>, string]> = [
  ['callback_url missing', { address_out: OK.address_out }, 'callback_url'],
  ['callback_url empty', { ...OK, callback_url: '' }, 'callback_url'],
  ['callback_url 2049 chars', { ...OK, callback_url: long(2049) }, 'callback_url'],
  ['callback_url relative', { ...OK, callback_url: 'shop.example/cb?order=1' }, 'callback_url'],
  ['callback_url path only', { ...OK, callback_url: '/cb?order=1' }, 'callback_url'],
  ['callback_url ftp', { ...OK, callback_url: 'ftp://shop.example/cb?order=1' }, 'callback_url'],
  ['callback_url javascript:', { ...OK, callback_url: 'javascript:alert(1)//order=1' }, 'callback_url'],
  ['callback_url http without operator permission', { ...OK, callback_url: 'http://shop.example/cb?order=1' }, 'callback_url'],
  ['callback_url no host', { ...OK, callback_url: 'https:///cb?order=1' }, 'callback_url'],
  ['callback_url credentials', { ...OK, callback_url: 'https://user:pw@shop.example/cb?order=1' }, 'callback_url'],
  ['callback_url space', { ...OK, callback_url: 'https://shop.example/c b?order=1' }, 'callback_url'],
  ['callback_url non-ASCII', { ...OK, callback_url: 'https://shop.example/café?order=1' }, 'callback_url'],
  ['callback_url 101 query pairs', { ...OK, callback_url: pairs(101) }, 'callback_url'],
  ['merchant key uuid', { ...OK, callback_url: 'https://shop.example/cb?order=1&uuid=x' }, 'callback_url'],
  ['merchant key value_coin (any case)', { ...OK, callback_url: 'https://shop.example/cb?order=1&Value_Coin=x' }, 'callback_url'],
  ['merchant key coin[]', { ...OK, callback_url: 'https://shop.example/cb?order=1&coin%5B%5D=x' }, 'callback_url'],
  ['merchant key pending', { ...OK, callback_url: 'https://shop.example/cb?order=1&pending=1' }, 'callback_url'],
  ['merchant key value_forwarded_coin_convert', { ...OK, callback_url: 'https://shop.example/cb?order=1&value_forwarded_coin_convert=1' }, 'callback_url'],
  ['address_out missing', { callback_url: OK.callback_url }, 'address_out'],
  ['address_out empty', { ...OK, address_out: '' }, 'address_out'],
  ['address_out 501 chars', { ...OK, address_out: 'b'.repeat(501) }, 'address_out'],
  ['address_out of another network', { ...OK, address_out: ETH_OUT }, 'address_out'],
  ['address_out testnet on mainnet', { ...OK, address_out: 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx' }, 'address_out'],
  ['address_out bad checksum', { ...OK, address_out: 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9h' }, 'address_out'],
  ['pending 2', { ...OK, pending: 2 }, 'pending'],
  ['pending -1', { ...OK, pending: -1 }, 'pending'],
  ['pending true', { ...OK, pending: true }, 'pending'],
  ['pending yes', { ...OK, pending: 'yes' }, 'pending'],
  ['post 2', { ...OK, post: 2 }, 'post'],
  ['json 01', { ...OK, json: '01' }, 'json'],
  ['convert 1.0 as text', { ...OK, convert: '1.0' }, 'convert'],
  ['confirmations 0', { ...OK, confirmations: 0 }, 'confirmations'],
  ['confirmations -3', { ...OK, confirmations: -3 }, 'confirmations'],
  ['confirmations 1.5', { ...OK, confirmations: 1.5 }, 'confirmations'],
  ['confirmations abc', { ...OK, confirmations: 'abc' }, 'confirmations'],
  ['confirmations above the operator maximum', { ...OK, confirmations: 101 }, 'confirmations'],
  ['priority urgent', { ...OK, priority: 'urgent' }, 'priority'],
  ['priority FAST (case matters)', { ...OK, priority: 'FAST' }, 'priority'],
  ['an expected amount is not accepted', { ...OK, amount: '0.5' }, 'amount'],
  ['the ticker belongs in the path', { ...OK, ticker: 'btc' }, 'ticker'],
];

describe.each(TRANSPORTS)('create validation by %s', (transport) => {
  it.each(INVALID)('%s → 422, 1001, errors.%s', async (_name, params, field) => {
    const r = await callCreate(api, '/api/btc/create', transport, params.callback_url ? fresh(params) : params);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ status: 'error', code: 1001, error: 'VALIDATION_FAILED' });
    expect(Object.keys(r.body.errors ?? {})).toContain(field);
    expect(r.body.errors![field].every((m) => typeof m === 'string' && m.length > 0)).toBe(true);
  });

  it('one 1001 response lists every failing field', async () => {
    const r = await callCreate(api, '/api/btc/create', transport, {
      callback_url: 'http://shop.example/cb?uuid=1',
      address_out: ETH_OUT,
      pending: 3,
      confirmations: 0,
      post: 'x',
      json: 5,
      priority: 'now',
      convert: 9,
      amount: 1,
    });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors!).sort()).toEqual(
      ['address_out', 'amount', 'callback_url', 'confirmations', 'convert', 'json', 'pending', 'post', 'priority'].sort(),
    );
    // Both callback problems, in one list.
    expect(r.body.errors!.callback_url).toHaveLength(2);
  });

  it.each([
    ['exactly 2048 characters', long(2048)],
    ['exactly 100 query pairs', pairs(100)],
    ['a fragment', 'https://shop.example/cb?order=1#frag'],
    ['a port, upper-case scheme and dot segments, kept verbatim', 'HTTPS://Shop.Example:8443/a/../cb?order=1&b=%41'],
    ['no query at all', 'https://shop.example/cb/order-1'],
  ])('callback_url with %s is accepted and stored exactly', async (_name, url) => {
    const renamed = url.replace('order=1', `order=${++n}`).replace('order-1', `order-${++n}`);
    const callback = url.length === 2048 ? renamed.slice(0, 2048) : renamed;
    const r = await callCreate(api, '/api/btc/create', transport, { ...OK, callback_url: callback });
    expect(r.status).toBe(200);
    expect(r.body.callback_url).toBe(callback);
  });
});

describe('create: currency and priority errors', () => {
  it.each([
    ['/api/xyz/create', 1101, 422],
    ['/api/erc20/dai/create', 1101, 422],
    ['/api/btc_usdt/create', 1101, 422],
  ])('%s → %s', async (path, code, status) => {
    const r = await callCreate(api, path, 'GET query', fresh(OK));
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject({ status: 'error', code });
  });

  it('a disabled asset → 1102; its network unconfigured → 1101', async () => {
    await api.db.execute(sql`INSERT INTO assets (ticker, enabled) VALUES ('doge', false)`);
    const d = await callCreate(api, '/api/doge/create', 'POST JSON', fresh({ ...OK, address_out: merchantAddress('dogecoin') }));
    expect(d.status).toBe(422);
    expect(d.body).toMatchObject({ code: 1102, error: 'CURRENCY_DISABLED' });
    const chains = api.deps.chains;
    api.deps.chains = { ...chains };
    delete api.deps.chains.zcash;
    try {
      const z = await callCreate(api, '/api/zec/create', 'POST JSON', fresh({ ...OK, address_out: merchantAddress('zcash') }));
      expect(z.body).toMatchObject({ code: 1101, error: 'UNSUPPORTED_CURRENCY' });
    } finally {
      api.deps.chains = chains;
    }
  });

  it.each(['slow', 'fast'])('priority %s on Solana → 1103 (default only)', async (priority) => {
    const r = await callCreate(api, '/api/sol/create', 'POST form', fresh({ ...OK, address_out: merchantAddress('solana'), priority }));
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 1103, error: 'UNSUPPORTED_PRIORITY' });
  });

  it('the ticker is checked before the parameters (1101 wins over 1001)', async () => {
    const r = await callCreate(api, '/api/nope/create', 'GET query', {});
    expect(r.body.code).toBe(1101);
  });
});

describe('create: transport-level errors', () => {
  it('malformed JSON → 1001 with errors.body', async () => {
    const r = await api.json('/api/btc/create', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"callback_url": ' });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 1001, errors: { body: expect.any(Array) } });
  });

  it.each([
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"x"'],
    ['JSON null', 'null'],
  ])('%s → 1001', async (_n, body) => {
    const r = await api.json('/api/btc/create', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe(1001);
  });

  it.each([
    ['JSON', 'application/json', JSON.stringify({ ...OK, pad: 'x'.repeat(20_000) })],
    ['form', 'application/x-www-form-urlencoded', `pad=${'x'.repeat(20_000)}`],
  ])('an oversized %s body → 1001, nothing internal', async (_n, type, body) => {
    const r = await api.json('/api/btc/create', { method: 'POST', headers: { 'content-type': type }, body });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 1001, errors: { body: ['Request body exceeds the size limit.'] } });
  });

  it('a form with too many fields → 1001', async () => {
    const body = Array.from({ length: 60 }, (_, i) => `f${i}=1`).join('&');
    const r = await api.json('/api/btc/create', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe(1001);
  });

  it('an unsupported content type → 1001', async () => {
    const r = await api.json('/api/btc/create', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'callback_url=x' });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 1001, errors: { body: ['Unsupported content type.'] } });
  });

  it('a parameter given twice in the query → 1001', async () => {
    const q = new URLSearchParams(fresh(OK) as Record<string, string>);
    q.append('pending', '0');
    q.append('pending', '1');
    const r = await api.json(`/api/btc/create?${q}`);
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors!)).toEqual(['pending']);
  });

  it.each([
    ['PUT', '/api/btc/create'],
    ['DELETE', '/api/erc20/usdt/create'],
    ['POST', '/api/btc/info'],
    ['POST', '/api/cryptocurrencies'],
    ['POST', '/api/btc/logs'],
    ['PATCH', '/api/pubkey'],
    ['GET', '/api/btc/create/extra'],
  ])('%s %s → 404, 1002', async (method, path) => {
    const r = await api.json(path, { method });
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ status: 'error', code: 1002, error: 'ENDPOINT_NOT_FOUND' });
  });

  it('no request logged an internal error', () => {
    expect(api.logged).toEqual([]);
  });
});

describe('create: hostile parameter names', () => {
  it.each(['__proto__', 'constructor', 'toString'])('%s is an unknown parameter, not a crash', async (key) => {
    const r = await api.json(`/api/btc/create?${new URLSearchParams({ ...fresh(OK), [key]: '1' } as Record<string, string>)}`);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe(1001);
    expect(JSON.stringify(r.body.errors)).toContain(`"${key}":["Unknown parameter."]`);
  });

  it('HEAD creates nothing', async () => {
    const q = new URLSearchParams({ ...OK, callback_url: 'https://shop.example/head-only' });
    const r = await fetch(`${api.base}/api/btc/create?${q}`, { method: 'HEAD' });
    expect(r.status).toBe(404);
    const rows = await api.db.query.paymentConfigs.findMany();
    expect(rows.some((c) => c.callbackUrl === 'https://shop.example/head-only')).toBe(false);
  });
});
