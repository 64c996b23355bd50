import { sql } from 'drizzle-orm';
import { ASSETS } from '../../src/domain/assets';
import { allChains, startApi, type TestApi } from './helpers';

/** SPEC 4.3, 4.4, 4.5, 4.8: catalog, info, pubkey and the standard pricing read. */

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const setAsset = (ticker: string, enabled: boolean, minimum: string | null, fee: string | null = null) =>
  api.db.execute(sql`INSERT INTO assets (ticker, enabled, minimum_base, fee_percent) VALUES (${ticker}, ${enabled}, ${minimum}, ${fee})
    ON CONFLICT (ticker) DO UPDATE SET enabled = EXCLUDED.enabled, minimum_base = EXCLUDED.minimum_base, fee_percent = EXCLUDED.fee_percent`);
const resetAssets = () => api.db.execute(sql`DELETE FROM assets`);

describe('GET /api/cryptocurrencies', () => {
  afterEach(resetAssets);

  it('every enabled asset of a configured network, keyed by canonical ticker, with both entry shapes', async () => {
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
    await setAsset('doge', false, null);
    const chains = api.deps.chains;
    api.deps.chains = allChains('mainnet', ['bitcoin', 'ethereum', 'dogecoin']);
    try {
      const r = await api.json('/api/cryptocurrencies');
      expect(Object.keys(r.body).sort()).toEqual(['btc', 'erc20_usdc', 'erc20_usdt', 'eth']);
    } finally {
      api.deps.chains = chains;
    }
  });

  it('minimum: the current figure at the asset precision, never below the floor, null while unavailable', async () => {
    await setAsset('btc', true, '123456');
    await setAsset('ltc', true, '5');
    await setAsset('eth', true, null);
    const r = await api.json('/api/cryptocurrencies');
    expect(r.body.btc).toMatchObject({ minimum: '0.00123456' });
    expect(r.body.ltc).toMatchObject({ minimum: '0.00100000' });
    expect(r.body.eth).toMatchObject({ minimum: null });
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

  it('operator fee and minimum; the floor while the current minimum is unavailable', async () => {
    await setAsset('doge', true, '2500000000', '0.5');
    expect((await api.json('/api/doge/info')).body).toMatchObject({ minimum_transaction: '25.00000000', fee_percent: '0.50' });
    await setAsset('doge', true, null);
    expect((await api.json('/api/doge/info')).body).toMatchObject({ minimum_transaction: '10.00000000' });
  });

  it.each([
    ['unknown ticker', '/api/xrp/info', 1101, 'UNSUPPORTED_CURRENCY'],
    ['token path spelling is not a ticker here', '/api/erc20/usdt/info', 1002, 'ENDPOINT_NOT_FOUND'],
  ])('%s → %s', async (_n, path, code, error) => {
    const r = await api.json(path);
    expect(r.body).toMatchObject({ status: 'error', code, error });
  });

  it('disabled → 422, 1102; network not configured → 422, 1101', async () => {
    await setAsset('bch', false, null);
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
