import { sql } from 'drizzle-orm';
import { deliveryAttempts, payments } from '../../src/db/schema';
import { callCreate, merchantAddress, startApi, type TestApi } from './helpers';

/** SPEC 4.7, 2.4, 2.5: the logs shape, field by field, from rows written straight into the database. */

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const BTC_CB = 'https://shop.example/logs?order=7&x=%41';
const SOL_CB = 'https://shop.example/logs-sol';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const logsOf = (ticker: string, callback: string) => api.json(`/api/${ticker}/logs?callback=${encodeURIComponent(callback)}`);

let btcConfig: string;
let solConfig: string;

beforeAll(async () => {
  await callCreate(api, '/api/btc/create', 'POST JSON', {
    callback_url: BTC_CB,
    address_out: merchantAddress('bitcoin'),
    pending: 1,
    confirmations: 3,
    priority: 'fast',
  });
  await callCreate(api, '/api/sol_usdc/create', 'POST JSON', { callback_url: SOL_CB, address_out: merchantAddress('solana') });
  const rows = await api.db.query.paymentConfigs.findMany();
  btcConfig = rows.find((r) => r.callbackUrl === BTC_CB)!.id;
  solConfig = rows.find((r) => r.callbackUrl === SOL_CB)!.id;
});

it('a configuration without payments: the header and an empty list', async () => {
  const r = await logsOf('btc', BTC_CB);
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    status: 'success',
    address_in: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu',
    address_out: merchantAddress('bitcoin'),
    callback_url: BTC_CB,
    notify_pending: true,
    notify_confirmations: 3,
    priority: 'fast',
    callbacks: [],
  });
});

it('UTXO payments: vout present, decimal strings at 8 places, ISO datetimes, 0/1 flags, attempts in order', async () => {
  const [sent] = await api.db
    .insert(payments)
    .values({
      configId: btcConfig, ticker: 'btc', network: 'bitcoin', depositKey: 'deposit:bitcoin:aa:1', txidIn: 'aa'.repeat(32), vout: 1,
      valueBase: '150000000', forwardedBase: '148000000', feeBase: '2000000', feePercent: '1.00', price: '64000.12',
      confirmations: 4, result: 'sent', txidOut: 'bb'.repeat(32), createdAt: new Date('2026-01-01T00:00:00Z'),
      lastUpdate: new Date('2026-01-01T01:02:03.456Z'),
    })
    .returning();
  await api.db.insert(payments).values({
    configId: btcConfig, ticker: 'btc', network: 'bitcoin', depositKey: 'deposit:bitcoin:cc:0', txidIn: 'cc'.repeat(32), vout: 0,
    valueBase: '1', result: 'pending', createdAt: new Date('2026-01-02T00:00:00Z'),
  });
  await api.db.insert(deliveryAttempts).values([
    { paymentUuid: sent.uuid, stage: 'confirmed', attempt: 2, requestUrl: BTC_CB + '&uuid=' + sent.uuid, responseBody: 'ok', responseStatus: 200,
      pending: 0, confirmed: 1, createdAt: new Date('2026-01-01T00:10:00Z') },
    { paymentUuid: sent.uuid, stage: 'pending', attempt: 1, requestUrl: BTC_CB, responseBody: null, responseStatus: null, error: 'ECONNREFUSED',
      nextTry: new Date('2026-01-01T00:05:00Z'), pending: 1, confirmed: 0, createdAt: new Date('2026-01-01T00:00:01Z') },
  ]);

  const r = await logsOf('btc', BTC_CB);
  expect(r.status).toBe(200);
  const [first, second] = r.body.callbacks as Array<Record<string, unknown>>;
  expect(first).toEqual({
    uuid: sent.uuid,
    txid_in: 'aa'.repeat(32),
    vout: 1,
    txid_out: 'bb'.repeat(32),
    value_coin: '1.50000000',
    value_forwarded_coin: '1.48000000',
    confirmations: 4,
    last_update: '2026-01-01T01:02:03.456Z',
    result: 'sent',
    fee_percent: '1.00',
    fee_coin: '0.02000000',
    price: '64000.12',
    coin: 'btc',
    logs: [
      { request_url: BTC_CB, responses: null, response_status: null, next_try: '2026-01-01T00:05:00.000Z', pending: 1, confirmed: 0 },
      { request_url: BTC_CB + '&uuid=' + sent.uuid, responses: 'ok', response_status: 200, next_try: null, pending: 0, confirmed: 1 },
    ],
  });
  expect(second).toMatchObject({ vout: 0, txid_out: null, value_coin: '0.00000001', value_forwarded_coin: '0.00000000', fee_coin: '0.00000000', price: null, confirmations: 0, last_update: null, result: 'pending', fee_percent: '0.00', logs: [] });
  expect(Object.keys(first)).toEqual(['uuid', 'txid_in', 'vout', 'txid_out', 'value_coin', 'value_forwarded_coin', 'confirmations', 'last_update', 'result', 'fee_percent', 'fee_coin', 'price', 'coin', 'logs']);
  for (const p of r.body.callbacks as Array<Record<string, unknown>>) {
    expect(Number.isInteger(p.confirmations)).toBe(true);
    expect(p.last_update === null || ISO.test(p.last_update as string)).toBe(true);
  }
});

it('sol family: no vout, confirmations 0 or 1 only, 6-decimal token amounts, payments of another ticker excluded', async () => {
  await api.db.insert(payments).values([
    { configId: solConfig, ticker: 'sol_usdc', network: 'solana', depositKey: 'deposit:solana:sig1:3', txidIn: 'sig1', vout: 3, valueBase: '2500000',
      confirmations: 31, result: 'processing', createdAt: new Date('2026-01-01T00:00:00Z') },
    { configId: solConfig, ticker: 'sol', network: 'solana', depositKey: 'deposit:solana:sig2:0', txidIn: 'sig2', valueBase: '1000000000', result: 'pending' },
  ]);
  const r = await logsOf('sol_usdc', SOL_CB);
  expect(r.status).toBe(200);
  const callbacks = r.body.callbacks as Array<Record<string, unknown>>;
  expect(callbacks).toHaveLength(1);
  expect(callbacks[0]).not.toHaveProperty('vout');
  expect(callbacks[0]).toMatchObject({ txid_in: 'sig1', confirmations: 1, value_coin: '2.500000', coin: 'sol_usdc' });
  // The same configuration serves sol; its logs show only sol payments.
  const native = await logsOf('sol', SOL_CB);
  expect((native.body.callbacks as unknown[]).map((c) => (c as { value_coin: string }).value_coin)).toEqual(['1.000000000']);
  expect(native.body.notify_confirmations).toBe(1);
});

it('a mined deposit waiting for finality shows its live confirmations: the watcher\'s newest block, never less than stored', async () => {
  const cb = 'https://shop.example/logs-live';
  await callCreate(api, '/api/btc/create', 'POST JSON', { callback_url: cb, address_out: merchantAddress('bitcoin'), confirmations: 6 });
  const config = (await api.db.query.paymentConfigs.findMany()).find((r) => r.callbackUrl === cb)!.id;
  await api.db.insert(payments).values([
    { configId: config, ticker: 'btc', network: 'bitcoin', depositKey: 'deposit:bitcoin:live:0', txidIn: 'dd'.repeat(32), vout: 0, valueBase: '1',
      blockNumber: 100n, confirmations: 1, result: 'pending', createdAt: new Date('2026-01-01T00:00:00Z') },
    // Past finality the stored count stands (it is what the snapshot carries).
    { configId: config, ticker: 'btc', network: 'bitcoin', depositKey: 'deposit:bitcoin:live:1', txidIn: 'ee'.repeat(32), vout: 1, valueBase: '1',
      blockNumber: 90n, confirmations: 6, result: 'sent', createdAt: new Date('2026-01-02T00:00:00Z') },
  ]);
  await api.db.execute(sql`INSERT INTO chain_cursors (network, height, block_hash) VALUES ('bitcoin', 104, 'ff') ON CONFLICT (network) DO UPDATE SET height = 104`);
  const r = await logsOf('btc', cb);
  expect((r.body.callbacks as Array<{ confirmations: number }>).map((c) => c.confirmations)).toEqual([5, 6]);
  await api.db.execute(sql`DELETE FROM chain_cursors WHERE network = 'bitcoin'`);
});

describe('errors', () => {
  it.each([
    ['an unknown callback', 'btc', 'https://shop.example/never'],
    ['another spelling of the callback', 'btc', BTC_CB.replace('%41', 'A')],
    ['a ticker of another family', 'eth', BTC_CB],
    ['a UTXO coin of another family', 'ltc', BTC_CB],
  ])('%s → 404, 1201', async (_n, ticker, callback) => {
    const r = await logsOf(ticker, callback);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ status: 'error', code: 1201, error: 'PAYMENT_NOT_FOUND' });
  });

  it.each([
    ['missing callback', '/api/btc/logs'],
    ['empty callback', '/api/btc/logs?callback='],
    ['callback over 2048 characters', `/api/btc/logs?callback=${'a'.repeat(2049)}`],
    ['callback given twice', `/api/btc/logs?callback=a&callback=b`],
    ['an unknown parameter', `/api/btc/logs?callback=${encodeURIComponent(BTC_CB)}&page=2`],
  ])('%s → 422, 1001', async (_n, path) => {
    const r = await api.json(path);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe(1001);
  });

  it('an unknown ticker → 1101; a disabled one still answers (reconciliation)', async () => {
    expect((await logsOf('nope', BTC_CB)).body.code).toBe(1101);
    await api.db.execute(sql`INSERT INTO assets (ticker, enabled) VALUES ('btc', false)`);
    expect((await logsOf('btc', BTC_CB)).status).toBe(200);
  });
});
