import { eq, sql } from 'drizzle-orm';
import { deriveAddressIn } from '../../src/chains/addresses';
import { HdSeed } from '../../src/chains/keys';
import { peekNextIndex } from '../../src/db/queries/derivation';
import { paymentConfigs } from '../../src/db/schema';
import { TEST_MNEMONIC, TRANSPORTS, allChains, callCreate, merchantAddress, queryRows, startApi, type TestApi } from './helpers';

/** SPEC 4.6 happy paths: both routes, three transports, defaults, reuse, family conflicts, derivation. */

const seed = HdSeed.fromMnemonic(TEST_MNEMONIC);
const BTC_OUT = merchantAddress('bitcoin');
const ETH_OUT = merchantAddress('ethereum');
const SOL_OUT = merchantAddress('solana');
const LTC_OUT = merchantAddress('litecoin');

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const stored = async (callback: string) => (await api.db.select().from(paymentConfigs).where(eq(paymentConfigs.callbackUrl, callback)))[0];

describe('the first configuration of each family takes index 0 (BIP test vectors)', () => {
  it.each([
    ['btc', BTC_OUT, 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', '0.00010000'],
    ['eth', ETH_OUT, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', '0.001000000000000000'],
    ['sol', SOL_OUT, 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk', '0.010000000'],
    ['doge', merchantAddress('dogecoin'), 'DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC', '10.00000000'],
    ['bch', merchantAddress('bitcoincash'), 'bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6', '0.00100000'],
    ['zec', merchantAddress('zcash'), 't1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7F', '0.00100000'],
    ['ltc', LTC_OUT, 'ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh', '0.00100000'],
  ])('%s', async (ticker, out, addressIn, minimum) => {
    const callback = `https://shop.example/first/${ticker}`;
    const r = await callCreate(api, `/api/${ticker}/create`, 'POST JSON', { callback_url: callback, address_out: out });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      address_in: addressIn,
      address_out: out,
      callback_url: callback,
      priority: 'default',
      minimum_transaction_coin: minimum,
      status: 'success',
    });
    expect(Object.keys(r.body)).toEqual(['address_in', 'address_out', 'callback_url', 'priority', 'minimum_transaction_coin', 'status']);
  });
});

describe.each(TRANSPORTS)('create by %s', (transport) => {
  it.each([
    ['ticker route', '/api/erc20_usdt/create'],
    ['chain/token route', '/api/erc20/usdt/create'],
  ])('%s: stores every parameter and returns the configuration', async (route, path) => {
    const callback = `https://shop.example/cb?t=${encodeURIComponent(transport)}&r=${route.length}`;
    const r = await callCreate(api, path, transport, {
      callback_url: callback,
      address_out: ETH_OUT.toLowerCase(),
      pending: 1,
      confirmations: 20,
      post: 1,
      json: 1,
      priority: 'fast',
      convert: 1,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ address_out: ETH_OUT.toLowerCase(), callback_url: callback, priority: 'fast', minimum_transaction_coin: '5.000000', status: 'success' });
    const row = await stored(callback);
    expect(row).toMatchObject({
      ticker: 'erc20_usdt',
      family: 'evm',
      addressIn: r.body.address_in,
      notifyPending: true,
      notifyConfirmations: 20,
      post: 1,
      json: 1,
      convert: 1,
      priority: 'fast',
      minimumTransactionBase: '5000000',
    });
    expect(r.body.address_in).toBe(deriveAddressIn(seed, 'ethereum', 'mainnet', row.derivationIndex));
  });

  it('defaults: pending 0, network confirmations, GET callback, priority default, no conversion', async () => {
    const callback = `https://shop.example/defaults?t=${encodeURIComponent(transport)}`;
    const r = await callCreate(api, '/api/btc/create', transport, { callback_url: callback, address_out: BTC_OUT });
    expect(r.status).toBe(200);
    expect(await stored(callback)).toMatchObject({ notifyPending: false, notifyConfirmations: 2, post: 0, json: 0, convert: 0, priority: 'default' });
  });
});

describe('reuse of a callback URL', () => {
  it('same family and payout → the stored immutable configuration, whatever else the new request says', async () => {
    const callback = 'https://shop.example/reuse?order=9';
    const first = await callCreate(api, '/api/eth/create', 'GET query', { callback_url: callback, address_out: ETH_OUT, pending: 1, priority: 'slow' });
    const again = await callCreate(api, '/api/eth/create', 'POST form', {
      callback_url: callback,
      // The same payout in another spelling (EVM addresses compare without their checksum case).
      address_out: ETH_OUT.toLowerCase(),
      pending: 0,
      priority: 'fast',
      confirmations: 50,
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await stored(callback)).toMatchObject({ addressOut: ETH_OUT, notifyPending: true, priority: 'slow', notifyConfirmations: 12 });
    // Another EVM asset shares the family and so the configuration; its minimum is its own.
    const token = await callCreate(api, '/api/erc20/usdc/create', 'POST JSON', { callback_url: callback, address_out: ETH_OUT });
    expect(token.body).toMatchObject({ address_in: first.body.address_in, address_out: ETH_OUT, priority: 'slow', minimum_transaction_coin: '5.000000' });
  });

  it('another family → 409, 1202, and nothing changes', async () => {
    const callback = 'https://shop.example/family?order=1';
    const first = await callCreate(api, '/api/sol/create', 'POST JSON', { callback_url: callback, address_out: SOL_OUT });
    expect(first.status).toBe(200);
    for (const [ticker, out] of [
      ['btc', BTC_OUT],
      ['eth', ETH_OUT],
      ['ltc', LTC_OUT],
    ]) {
      const r = await callCreate(api, `/api/${ticker}/create`, 'POST JSON', { callback_url: callback, address_out: out });
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({ status: 'error', code: 1202, error: 'CALLBACK_ADDRESS_FAMILY_CONFLICT' });
    }
    // The sol tokens are the same family.
    const spl = await callCreate(api, '/api/sol_usdc/create', 'GET query', { callback_url: callback, address_out: SOL_OUT });
    expect(spl.body.address_in).toBe(first.body.address_in);
  });

  it('another payout → 422 1001 errors.address_out, and the stored configuration is not shown', async () => {
    const callback = 'https://shop.example/squat?order=1001';
    const shop = await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: callback, address_out: ETH_OUT });
    expect(shop.status).toBe(200);
    const squat = await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: callback, address_out: merchantAddress('ethereum', 'mainnet', 1n) });
    expect(squat.status).toBe(422);
    expect(squat.body).toEqual({
      status: 'error',
      code: 1001,
      error: 'VALIDATION_FAILED',
      message: expect.any(String),
      errors: { address_out: ['The callback URL is registered with another payout address.'] },
    });
    expect(JSON.stringify(squat.body)).not.toContain(String(shop.body.address_in));
    expect(await stored(callback)).toMatchObject({ addressOut: ETH_OUT });
  });

  it('a request target the callbacks do not share is a different configuration (query order)', async () => {
    const a = await callCreate(api, '/api/btc/create', 'POST JSON', { callback_url: 'https://shop.example/x?a=1&b=2', address_out: BTC_OUT });
    const b = await callCreate(api, '/api/btc/create', 'POST JSON', { callback_url: 'https://shop.example/x?b=2&a=1', address_out: BTC_OUT });
    expect(new Set([a.body.address_in, b.body.address_in]).size).toBe(2);
  });
});

describe('derivation counters per address family', () => {
  it('each new configuration takes the next index of its own family', async () => {
    const next = { btc: await peekNextIndex(api.db, 'btc'), ltc: await peekNextIndex(api.db, 'ltc') };
    const b = await callCreate(api, '/api/btc/create', 'POST JSON', { callback_url: 'https://shop.example/ctr/1', address_out: BTC_OUT });
    const l = await callCreate(api, '/api/ltc/create', 'POST JSON', { callback_url: 'https://shop.example/ctr/2', address_out: LTC_OUT });
    expect(b.body.address_in).toBe(deriveAddressIn(seed, 'bitcoin', 'mainnet', next.btc));
    expect(l.body.address_in).toBe(deriveAddressIn(seed, 'litecoin', 'mainnet', next.ltc));
  });

  it('sol family: confirmations override is accepted and finality stays 1', async () => {
    const callback = 'https://shop.example/sol-conf';
    const r = await callCreate(api, '/api/sol_usdt/create', 'POST JSON', { callback_url: callback, address_out: SOL_OUT, confirmations: 32 });
    expect(r.status).toBe(200);
    expect((await stored(callback)).notifyConfirmations).toBe(1);
  });
});

describe('operator settings', () => {
  it('http callbacks are accepted when the operator allows them', async () => {
    const config = api.deps.config;
    api.deps.config = { ...config, callbackAllowHttp: true };
    try {
      const r = await callCreate(api, '/api/btc/create', 'GET query', { callback_url: 'http://shop.example/plain', address_out: BTC_OUT });
      expect(r.status).toBe(200);
    } finally {
      api.deps.config = config;
    }
  });

  it('regtest chains validate and derive regtest addresses', async () => {
    const chains = api.deps.chains;
    api.deps.chains = allChains('regtest');
    try {
      const bad = await callCreate(api, '/api/btc/create', 'POST JSON', { callback_url: 'https://shop.example/rt/1', address_out: BTC_OUT });
      expect(bad.body.code).toBe(1001);
      const ok = await callCreate(api, '/api/btc/create', 'POST JSON', { callback_url: 'https://shop.example/rt/2', address_out: merchantAddress('bitcoin', 'regtest') });
      expect(ok.status).toBe(200);
      expect(ok.body.address_in).toMatch(/^bcrt1q/);
    } finally {
      api.deps.chains = chains;
    }
  });

  it('minimum_transaction_coin is the current minimum at creation, kept as a snapshot', async () => {
    const callback = 'https://shop.example/snapshot';
    const setLtc = (value: number) =>
      api.db.execute(sql`INSERT INTO asset_minimums (ticker, value_base, computed_at) VALUES ('ltc', ${value}, now())
        ON CONFLICT (ticker) DO UPDATE SET value_base = EXCLUDED.value_base, computed_at = now()`);
    await setLtc(250000);
    const r = await callCreate(api, '/api/ltc/create', 'POST JSON', { callback_url: callback, address_out: LTC_OUT });
    expect(r.body.minimum_transaction_coin).toBe('0.00250000');
    await setLtc(900000);
    const again = await callCreate(api, '/api/ltc/create', 'POST JSON', { callback_url: callback, address_out: LTC_OUT });
    expect(again.body.minimum_transaction_coin).toBe('0.00250000');
    expect((await api.json('/api/ltc/info')).body.minimum_transaction).toBe('0.00900000');
    // No current figure (the latest refresh failed): the last one, as info states it.
    await api.db.execute(sql`UPDATE asset_minimums SET unavailable_reason = 'no fee estimate from the Litecoin node' WHERE ticker = 'ltc'`);
    const other = await callCreate(api, '/api/ltc/create', 'POST JSON', { callback_url: `${callback}/2`, address_out: LTC_OUT });
    expect(other.body.minimum_transaction_coin).toBe('0.00900000');
    await api.db.execute(sql`DELETE FROM asset_minimums`);
  });

  it('the seed never appears in a response', async () => {
    const r = await api.get('/api/btc/create?callback_url=x');
    expect(await r.text()).not.toMatch(/abandon|seed|mnemonic/i);
  });
});

describe('address_out may not be one of the gateway\'s deposit addresses', () => {
  it.each([
    ['the same spelling', (a: string) => a],
    ['another case', (a: string) => a.toLowerCase()],
  ])('EVM, %s → 1001 address_out', async (_n, spell) => {
    const first = await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: 'https://shop.example/loop/1', address_out: ETH_OUT });
    const r = await callCreate(api, '/api/erc20_usdt/create', 'POST JSON', {
      callback_url: `https://shop.example/loop/${_n.length}`,
      address_out: spell(first.body.address_in as string),
    });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual({ address_out: ['Must not be a deposit address of this gateway.'] });
  });

  it('a refused or repeated create takes no index, no pool address and stores nothing (one statement decides)', async () => {
    const taken = async () => {
      const [r] = await queryRows<{ pool: string }>(api.db, sql`SELECT count(*) AS pool FROM address_pool WHERE taken_at IS NOT NULL`);
      return { evm: await peekNextIndex(api.db, 'evm'), pool: r.pool };
    };
    const eth = await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: 'https://shop.example/take/eth', address_out: ETH_OUT });
    const sol = await callCreate(api, '/api/sol/create', 'POST JSON', { callback_url: 'https://shop.example/take/sol', address_out: SOL_OUT });
    const configs = (await api.db.select().from(paymentConfigs)).length;
    const before = await taken();
    // address_out is a deposit address: derived (EVM) and pooled (Solana) families.
    const loopEth = await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: 'https://shop.example/take/eth2', address_out: eth.body.address_in });
    const loopSol = await callCreate(api, '/api/sol/create', 'POST JSON', { callback_url: 'https://shop.example/take/sol2', address_out: sol.body.address_in });
    expect([loopEth.status, loopSol.status]).toEqual([422, 422]);
    // The same callbacks again: the stored configurations.
    const again = await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: 'https://shop.example/take/eth', address_out: ETH_OUT });
    const againSol = await callCreate(api, '/api/sol/create', 'POST JSON', { callback_url: 'https://shop.example/take/sol', address_out: SOL_OUT });
    expect([again.body.address_in, againSol.body.address_in]).toEqual([eth.body.address_in, sol.body.address_in]);
    expect(await taken()).toEqual(before);
    expect((await api.db.select().from(paymentConfigs)).length).toBe(configs);
    expect(await stored('https://shop.example/take/eth2')).toBeUndefined();
  });

  it('BCH without its prefix is the same address', async () => {
    const first = await callCreate(api, '/api/bch/create', 'POST JSON', {
      callback_url: 'https://shop.example/loop/bch',
      address_out: merchantAddress('bitcoincash'),
    });
    const r = await callCreate(api, '/api/bch/create', 'POST JSON', {
      callback_url: 'https://shop.example/loop/bch2',
      address_out: (first.body.address_in as string).replace('bitcoincash:', ''),
      pending: 7,
    });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors!).sort()).toEqual(['address_out', 'pending']);
  });
});
