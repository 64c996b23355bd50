import { assets } from '../../src/db/schema';
import { merchantAddress, startApi, type TestApi } from './helpers';
import { depositAddressFor, qrPath } from './qrcode-helpers';

/** GET /api/{ticker}/qrcode refusals: the spec's error body (SPEC 7), never a 5xx. */

let api: TestApi;
let btcAddress: string;
let ethAddress: string;
beforeAll(async () => {
  api = await startApi();
  btcAddress = await depositAddressFor(api, 'btc', 'bitcoin');
  ethAddress = await depositAddressFor(api, 'eth', 'ethereum');
});
afterAll(() => api.close());

const error = async (path: string) => {
  const r = await api.json(path);
  expect(r.body.status).toBe('error');
  expect(typeof r.body.message).toBe('string');
  return { status: r.status, code: r.body.code, error: r.body.error, fields: r.body.errors ? Object.keys(r.body.errors).sort() : undefined };
};

describe('1201 PAYMENT_NOT_FOUND: not a deposit address of this gateway for the ticker', () => {
  it.each([
    ['a valid address the gateway never issued', 'btc', () => merchantAddress('bitcoin')],
    ['the merchant\'s payout address of a configuration', 'btc', () => merchantAddress('bitcoin')],
    ['a btc deposit address asked as ltc', 'ltc', () => btcAddress],
    ['an eth deposit address asked as a token its configuration does not take', 'erc20_usdc', () => ethAddress],
    ['an eth deposit address asked as sol', 'sol', () => ethAddress],
    ['text that is no address at all', 'btc', () => 'not-an-address'],
    ['a deposit address with a changed character', 'btc', () => `${btcAddress.slice(0, -1)}${btcAddress.endsWith('q') ? 'p' : 'q'}`],
  ])('%s', async (_what, ticker, address) => {
    expect(await error(qrPath(ticker, { address: address() }))).toEqual({ status: 404, code: 1201, error: 'PAYMENT_NOT_FOUND', fields: undefined });
  });

  it('the token becomes available once the configuration is reused for it', async () => {
    await depositAddressFor(api, 'erc20_usdc', 'ethereum', 'https://shop.example/qr/eth');
    expect((await api.json(qrPath('erc20_usdc', { address: ethAddress }))).status).toBe(200);
  });
});

describe('1001 VALIDATION_FAILED with field errors', () => {
  it.each([
    ['address missing', '/api/btc/qrcode', ['address']],
    ['address empty', '/api/btc/qrcode?address=', ['address']],
    ['address repeated', '/api/btc/qrcode?address=a&address=b', ['address']],
    ['address too long', `/api/btc/qrcode?address=${'a'.repeat(501)}`, ['address']],
    ['value not a number', 'value=abc', ['value']],
    ['value negative', 'value=-1', ['value']],
    ['value in exponent notation', 'value=1e5', ['value']],
    ['value with a comma', 'value=0,5', ['value']],
    ['value zero', 'value=0.000', ['value']],
    ['value finer than the asset (9 places for btc)', 'value=0.000000001', ['value']],
    ['value absurdly long', `value=${'9'.repeat(41)}`, ['value']],
    ['value repeated', 'value=1&value=2', ['value']],
    ['size not a number', 'size=big', ['size']],
    ['size below 64', 'size=63', ['size']],
    ['size above 1024', 'size=1025', ['size']],
    ['size fractional', 'size=256.5', ['size']],
    ['an unknown parameter', 'amount=1', ['amount']],
    ['value and size at once', 'value=x&size=1', ['size', 'value']],
  ])('%s', async (_what, query, fields) => {
    const path = query.startsWith('/') ? query : `${qrPath('btc', { address: btcAddress })}&${query}`;
    expect(await error(path)).toEqual({ status: 422, code: 1001, error: 'VALIDATION_FAILED', fields });
  });

  it('each field error says what to send', async () => {
    const r = await api.json(`${qrPath('btc', { address: btcAddress, value: '0.123456789', size: '2000' })}&size=3&label=x`);
    expect(r.body.errors).toEqual({
      size: ['Must be a single string value.'],
      label: ['Unknown parameter.'],
      value: ['Must have at most 8 decimal places for btc.'],
    });
    const both = await api.json(qrPath('btc', { address: btcAddress, value: '0.123456789', size: '2000' }));
    expect(both.body.errors).toEqual({ size: ['Must be an integer from 64 to 1024.'], value: ['Must have at most 8 decimal places for btc.'] });
    const zero = await api.json(qrPath('btc', { address: btcAddress, value: '0' }));
    expect(zero.body.errors).toEqual({ value: ['Must be greater than zero.'] });
    expect((await api.json('/api/btc/qrcode')).body.errors).toEqual({ address: ['Required.'] });
  });

  it('the precision rule is the asset\'s: 18 places pass for eth, 19 do not; 6 for the ERC-20', async () => {
    expect((await api.json(qrPath('eth', { address: ethAddress, value: '0.000000000000000001' }))).status).toBe(200);
    expect(await error(qrPath('eth', { address: ethAddress, value: '0.0000000000000000001' }))).toMatchObject({ code: 1001, fields: ['value'] });
    expect(await error(qrPath('erc20_usdc', { address: ethAddress, value: '0.0000001' }))).toMatchObject({ code: 1001, fields: ['value'] });
  });
});

describe('1101 and 1102', () => {
  it('an unknown ticker is 1101, before any parameter is looked at', async () => {
    expect(await error('/api/nope/qrcode?address=x&size=1')).toEqual({ status: 422, code: 1101, error: 'UNSUPPORTED_CURRENCY', fields: undefined });
  });

  it('a disabled asset is 1102', async () => {
    const address = await depositAddressFor(api, 'doge', 'dogecoin');
    await api.db.insert(assets).values({ ticker: 'doge', enabled: false });
    expect(await error(qrPath('doge', { address }))).toEqual({ status: 422, code: 1102, error: 'CURRENCY_DISABLED', fields: undefined });
  });

  it('nothing above was logged as an internal error', () => {
    expect(api.logged).toEqual([]);
  });
});
