import { sql } from 'drizzle-orm';
import { clientKey, CreateRateLimit } from '../../api/rate-limit';
import { loadConfig } from '../../src/config';
import { merchantAddress, queryRows, startApi, type TestApi } from './helpers';

/** Issue 56 item 4: a per-client limit on create, 429 1003 in the spec's body, honest clients unaffected. */

let n = 0;
const create = (api: TestApi, ticker: string, out: string, forwardedFor?: string) =>
  api.json(`/api/${ticker}/create?${new URLSearchParams({ callback_url: `https://shop.example/limit?order=${++n}`, address_out: out })}`, {
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
  });

describe('behind a trusted proxy', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({ config: loadConfig({ CREATE_RATE_LIMIT: '5', TRUST_PROXY: 'loopback' }) });
  });
  afterAll(() => api.close());

  it('a client past its limit → 429 1003 with Retry-After; it takes no deposit address; another client still creates', async () => {
    const sol = merchantAddress('solana');
    const flood = [];
    for (let i = 0; i < 8; i++) flood.push(await create(api, 'sol', sol, '203.0.113.7'));
    expect(flood.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(flood[5].body).toEqual({
      status: 'error',
      code: 1003,
      error: 'RATE_LIMITED',
      message: expect.stringMatching(/at most 5 a minute/),
    });
    expect(Number(flood[5].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const [{ taken }] = await queryRows<{ taken: string }>(api.db, sql`SELECT count(*) AS taken FROM address_pool WHERE taken_at IS NOT NULL AND network = 'solana'`);
    expect(Number(taken)).toBe(5);
    // Another merchant behind the same proxy, and every transport of the flooder alike.
    expect((await create(api, 'sol', sol, '198.51.100.20')).status).toBe(200);
    const post = await api.json('/api/eth/create', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.7' },
      body: JSON.stringify({ callback_url: 'https://shop.example/limit/post', address_out: merchantAddress('ethereum') }),
    });
    expect(post.status).toBe(429);
  });

  it('one IPv6 /64 is one client', async () => {
    const btc = merchantAddress('bitcoin');
    const statuses = [];
    for (let i = 1; i <= 6; i++) statuses.push((await create(api, 'btc', btc, `2001:db8:1:2::${i.toString(16)}`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect((await create(api, 'btc', btc, '2001:db8:1:3::1')).status).toBe(200);
  });
});

describe('without a trusted proxy', () => {
  it('X-Forwarded-For is not believed: the connection\'s address is the client', async () => {
    const api = await startApi({ config: loadConfig({ CREATE_RATE_LIMIT: '2' }) });
    try {
      const btc = merchantAddress('bitcoin');
      const statuses = [];
      for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) statuses.push((await create(api, 'btc', btc, ip)).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await api.close();
    }
  });
});

describe('the bucket', () => {
  it('refills at the limit\'s rate and holds at most the limit', () => {
    let now = 0;
    const limit = new CreateRateLimit(60, () => now);
    for (let i = 0; i < 60; i++) expect(limit.take('a')).toBeUndefined();
    expect(limit.take('a')).toBe(1);
    now += 1_000;
    expect(limit.take('a')).toBeUndefined();
    expect(limit.take('a')).toBe(1);
    now += 3_600_000;
    for (let i = 0; i < 60; i++) expect(limit.take('a')).toBeUndefined();
    expect(limit.take('a')).toBe(1);
    expect(limit.take('b')).toBeUndefined();
  });

  it.each([
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2::5', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:0000:0000:0000:0009', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('client of %s: %s', (ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });

  it('is on by default', () => {
    expect(loadConfig({}).createRateLimit).toBe(120);
  });
});
