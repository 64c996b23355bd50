import http from 'node:http';
import etag from 'etag';
import { sql } from 'drizzle-orm';
import { ASSETS } from '../../src/domain/assets';
import { allChains, startApi, type TestApi } from './helpers';

/** SPEC 4.3, 4.4, 4.5, 4.8: catalog, info, pubkey and the standard pricing read. */

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const setAsset = (ticker: string, enabled: boolean, fee: string | null = null) =>
  api.db.execute(sql`INSERT INTO assets (ticker, enabled, fee_percent) VALUES (${ticker}, ${enabled}, ${fee})
    ON CONFLICT (ticker) DO UPDATE SET enabled = EXCLUDED.enabled, fee_percent = EXCLUDED.fee_percent`);
/** An asset_minimums row as the refresh schedule and the operator's pin leave it; ageSeconds dates computed_at. */
const setMinimum = (ticker: string, m: { value?: string; ageSeconds?: number; unavailable?: string; pinned?: string }) =>
  api.db.execute(sql`INSERT INTO asset_minimums (ticker, value_base, computed_at, unavailable_reason, pinned_base)
    VALUES (${ticker}, ${m.value ?? null}, now() - make_interval(secs => ${m.ageSeconds ?? 0}), ${m.unavailable ?? null}, ${m.pinned ?? null})`);
const resetAssets = () => api.db.execute(sql`DELETE FROM assets; DELETE FROM asset_minimums`);
/** Default MINIMUM_REFRESH_MS is 300 s; a figure is current for three refreshes. */
const STALE_SECONDS = 3 * 300 + 5;

describe('GET /api/cryptocurrencies', () => {
  afterEach(resetAssets);

  it('every enabled asset of a configured network, keyed by canonical ticker, with both entry shapes', async () => {
    await setMinimum('erc20_usdt', { value: '5000000' });
    await setMinimum('btc', { value: '10000' });
    await setMinimum('eth', { value: '1000000000000000' });
    const r = await api.json('/api/cryptocurrencies');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(Object.keys(ASSETS).sort());
    expect(r.body.erc20_usdt).toEqual({
      name: 'Tether USD (ERC-20)',
      ticker: 'erc20_usdt',
      minimum: '5.000000',
      decimals: 6,
      type: 'token',
      asset_name: 'Tether USD (ERC-20)',
      symbol: 'USDT',
      network_name: 'Ethereum',
      confirmations_required: 12,
    });
    expect(r.body.btc).toMatchObject({ minimum: '0.00010000', decimals: 8, type: 'native', confirmations_required: 2 });
    expect(r.body.eth).toMatchObject({ minimum: '0.001000000000000000', decimals: 18 });
    for (const t of ['sol', 'sol_usdc', 'sol_usdt']) expect(r.body[t]).toMatchObject({ confirmations_required: 1 });
  });

  it('disabled assets and unconfigured networks are not listed', async () => {
    await setAsset('doge', false);
    const chains = api.deps.chains;
    api.deps.chains = allChains('mainnet', ['bitcoin', 'ethereum', 'dogecoin']);
    try {
      const r = await api.json('/api/cryptocurrencies');
      expect(Object.keys(r.body).sort()).toEqual(['btc', 'erc20_usdc', 'erc20_usdt', 'eth']);
    } finally {
      api.deps.chains = chains;
    }
  });

  it('minimum: the current figure at the asset precision, never below the floor', async () => {
    await setMinimum('btc', { value: '123456' });
    await setMinimum('ltc', { value: '5' });
    const r = await api.json('/api/cryptocurrencies');
    expect(r.body.btc).toMatchObject({ minimum: '0.00123456' });
    expect(r.body.ltc).toMatchObject({ minimum: '0.00100000' });
  });

  it('minimum null, the asset still listed: no figure yet, a stale one, or one the latest refresh could not compute', async () => {
    await setMinimum('eth', { value: '2000000000000000', ageSeconds: STALE_SECONDS });
    await setMinimum('erc20_usdt', { value: '9000000', unavailable: 'no price to convert the Ethereum network cost into USDT' });
    await setMinimum('sol', { value: '20000000', ageSeconds: 3 * 300 - 30 });
    const r = await api.json('/api/cryptocurrencies');
    expect(Object.keys(r.body).sort()).toEqual(Object.keys(ASSETS).sort());
    expect(r.body.btc).toMatchObject({ minimum: null });
    expect(r.body.eth).toMatchObject({ minimum: null });
    expect(r.body.erc20_usdt).toMatchObject({ minimum: null });
    expect(r.body.sol).toMatchObject({ minimum: '0.020000000' });
  });

  it('a pinned minimum is shown and never goes stale', async () => {
    await setMinimum('ltc', { value: '300000', ageSeconds: 10 * STALE_SECONDS, pinned: '2500000' });
    await setMinimum('erc20_usdc', { unavailable: 'no fee estimate from the Ethereum node', pinned: '12000000' });
    const r = await api.json('/api/cryptocurrencies');
    expect(r.body.ltc).toMatchObject({ minimum: '0.02500000' });
    expect(r.body.erc20_usdc).toMatchObject({ minimum: '12.000000' });
  });

  it('no network configured → an empty catalog', async () => {
    const chains = api.deps.chains;
    api.deps.chains = {};
    try {
      expect((await api.json('/api/cryptocurrencies')).body).toEqual({});
    } finally {
      api.deps.chains = chains;
    }
  });
});

describe('a body served again (catalog, info)', () => {
  it('carries the ETag Express makes of its bytes; a matching If-None-Match gets 304 and no body', async () => {
    for (const path of ['/api/cryptocurrencies', '/api/eth/info']) {
      const first = await fetch(`${api.base}${path}`);
      const text = await first.text();
      expect([path, first.headers.get('etag')]).toEqual([path, etag(Buffer.from(text), { weak: true })]);
      expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const again = await fetch(`${api.base}${path}`);
      expect(await again.text()).toBe(text);
      // node:http, not fetch: fetch adds Cache-Control: no-cache to a conditional request, which no server answers with 304.
      const fresh = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
        http
          .get(`${api.base}${path}`, { headers: { 'if-none-match': first.headers.get('etag')! } }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode, body }));
          })
          .on('error', reject);
      });
      expect([path, fresh.status, fresh.body]).toEqual([path, 304, '']);
    }
  });
});

describe('GET /api/{ticker}/info', () => {
  afterEach(resetAssets);

  it.each([
    ['btc', { ticker: 'btc', status: 'active', minimum_transaction: '0.00010000', confirmations_required: 2, fee_percent: '1.00' }],
    ['erc20_usdc', { ticker: 'erc20_usdc', status: 'active', minimum_transaction: '5.000000', confirmations_required: 12, fee_percent: '1.00' }],
    ['sol_usdt', { ticker: 'sol_usdt', status: 'active', minimum_transaction: '1.000000', confirmations_required: 1, fee_percent: '1.00' }],
  ])('%s', async (ticker, expected) => {
    const r = await api.json(`/api/${ticker}/info`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual(expected);
  });

  it('operator fee and current minimum', async () => {
    await setAsset('doge', true, '0.5');
    await setMinimum('doge', { value: '2500000000' });
    expect((await api.json('/api/doge/info')).body).toMatchObject({ minimum_transaction: '25.00000000', fee_percent: '0.50' });
  });

  it('while the catalog shows null: the last figure, else the registry floor; a pin as pinned', async () => {
    await setMinimum('doge', { value: '2500000000', ageSeconds: STALE_SECONDS });
    await setMinimum('eth', { value: '3000000000000000', unavailable: 'no fee estimate from the Ethereum node' });
    await setMinimum('ltc', { unavailable: 'no fee estimate from the Litecoin node' });
    await setMinimum('btc', { value: '50000', ageSeconds: 10 * STALE_SECONDS, pinned: '70000' });
    const catalog = (await api.json('/api/cryptocurrencies')).body as Record<string, { minimum: string | null }>;
    expect([catalog.doge.minimum, catalog.eth.minimum, catalog.ltc.minimum, catalog.btc.minimum]).toEqual([null, null, null, '0.00070000']);
    expect((await api.json('/api/doge/info')).body.minimum_transaction).toBe('25.00000000');
    expect((await api.json('/api/eth/info')).body.minimum_transaction).toBe('0.003000000000000000');
    expect((await api.json('/api/ltc/info')).body.minimum_transaction).toBe('0.00100000');
    expect((await api.json('/api/sol/info')).body.minimum_transaction).toBe('0.010000000');
    expect((await api.json('/api/btc/info')).body.minimum_transaction).toBe('0.00070000');
  });

  it.each([
    ['unknown ticker', '/api/xrp/info', 1101, 'UNSUPPORTED_CURRENCY'],
    ['token path spelling is not a ticker here', '/api/erc20/usdt/info', 1002, 'ENDPOINT_NOT_FOUND'],
  ])('%s → %s', async (_n, path, code, error) => {
    const r = await api.json(path);
    expect(r.body).toMatchObject({ status: 'error', code, error });
  });

  it('disabled → 422, 1102; network not configured → 422, 1101', async () => {
    await setAsset('bch', false);
    const d = await api.json('/api/bch/info');
    expect(d.status).toBe(422);
    expect(d.body).toMatchObject({ code: 1102, error: 'CURRENCY_DISABLED' });
    const chains = api.deps.chains;
    api.deps.chains = allChains('mainnet', ['bitcoin']);
    try {
      const n = await api.json('/api/eth/info');
      expect(n.status).toBe(422);
      expect(n.body).toMatchObject({ code: 1101 });
    } finally {
      api.deps.chains = chains;
    }
  });
});

describe('GET /api/pubkey', () => {
  const PEM = '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----\n';

  it('not configured → the spec text as text/plain', async () => {
    const r = await api.get('/api/pubkey');
    expect(r.status).toBe(503);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await r.text()).toBe('Public key not configured.');
  });

  it('the key is read live on every request', async () => {
    let current = PEM;
    api.deps.getPublicKeyPem = async () => current;
    try {
      const a = await api.get('/api/pubkey');
      expect(a.status).toBe(200);
      expect(a.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await a.text()).toBe(PEM);
      current = PEM.replace('MIIB', 'NEWK');
      expect(await (await api.get('/api/pubkey')).text()).toBe(current);
    } finally {
      api.deps.getPublicKeyPem = async () => undefined;
    }
  });

  it('a failing signer → 1501 without internals', async () => {
    api.deps.getPublicKeyPem = async () => {
      throw new Error('cannot read /secret/key.pem');
    };
    try {
      const r = await api.get('/api/pubkey');
      expect(r.status).toBe(500);
      const text = await r.text();
      expect(JSON.parse(text)).toMatchObject({ code: 1501 });
      expect(text).not.toMatch(/secret|key\.pem/);
    } finally {
      api.deps.getPublicKeyPem = async () => undefined;
      api.logged.length = 0;
    }
  });
});

describe('GET /api/pricing/standard', () => {
  it('ascending tiers with explicit bounds, decimal strings', async () => {
    const r = await api.json('/api/pricing/standard');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'success',
      basis: 'rolling_volume_per_callback_domain',
      window_days: 30,
      currency: 'USDT',
      tiers: [
        { from_volume_usdt: '0.00', to_volume_usdt: '10000.00', fee_percent: '1.00' },
        { from_volume_usdt: '10000.00', to_volume_usdt: '50000.00', fee_percent: '0.90' },
        { from_volume_usdt: '50000.00', to_volume_usdt: '250000.00', fee_percent: '0.80' },
        { from_volume_usdt: '250000.00', to_volume_usdt: '1000000.00', fee_percent: '0.65' },
        { from_volume_usdt: '1000000.00', to_volume_usdt: null, fee_percent: '0.50' },
      ],
    });
  });
});
