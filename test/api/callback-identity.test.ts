import { sql } from 'drizzle-orm';
import { callbackWireKey } from '../../src/callbacks/transport';
import { callCreate, merchantAddress, queryRows, startApi, type TestApi } from './helpers';

/**
 * DESIGN 15: a callback URL belongs to one payout. A reuse with another address_out, or an alias whose
 * callbacks are the same on the wire (host, port, request target), never gets a payout of its own.
 */

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const SHOP = merchantAddress('ethereum', 'mainnet', 0n);
const THIEF = merchantAddress('ethereum', 'mainnet', 7n);
const refused = {
  status: 'error',
  code: 1001,
  error: 'VALIDATION_FAILED',
  message: expect.any(String),
  errors: { address_out: ['The callback URL is registered with another payout address.'] },
};

let n = 0;
// [spelling, the shop's URL of order o, the alias an attacker tries]
const ALIASES: Array<[string, (o: number) => string, (o: number) => string]> = [
  ['a fragment', (o) => `https://shop.example/cb?order=${o}`, (o) => `https://shop.example/cb?order=${o}#x`],
  ['the host in upper case', (o) => `https://shop.example/cb?order=${o}`, (o) => `https://SHOP.Example/cb?order=${o}`],
  ['the default port', (o) => `https://shop.example/cb?order=${o}`, (o) => `https://shop.example:443/cb?order=${o}`],
  ['a /./ segment', (o) => `https://shop.example/cb?order=${o}`, (o) => `https://shop.example/./cb?order=${o}`],
  ['a trailing &', (o) => `https://shop.example/cb?order=${o}`, (o) => `https://shop.example/cb?order=${o}&`],
  ['an empty pair inside the query', (o) => `https://shop.example/cb?order=${o}&x=1`, (o) => `https://shop.example/cb?order=${o}&&x=1`],
  ['a leading &', (o) => `https://shop.example/cb?order=${o}`, (o) => `https://shop.example/cb?&order=${o}`],
  ['a /../ segment', (o) => `https://shop.example/cb/${o}`, (o) => `https://shop.example/x/../cb/${o}`],
  ['an encoded dot segment', (o) => `https://shop.example/cb/${o}`, (o) => `https://shop.example/%2e/cb/${o}`],
  ['an empty query', (o) => `https://shop.example/cb/${o}`, (o) => `https://shop.example/cb/${o}?`],
  ['the scheme in upper case', (o) => `https://shop.example/cb?order=${o}`, (o) => `HTTPS://shop.example/cb?order=${o}`],
  ['a character the URL parser encodes', (o) => `https://shop.example/cb/%22${o}`, (o) => `https://shop.example/cb/"${o}`],
];

describe('an alias of a callback URL', () => {
  it.each(ALIASES)('%s: has the same wire key', (_name, shop, alias) => {
    expect(callbackWireKey(alias(1))).toBe(callbackWireKey(shop(1)));
  });

  it.each(ALIASES)('%s: with another payout → 422 1001, with the same payout → the shop\'s configuration', async (_name, shop, alias) => {
    const order = ++n;
    const made = await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: shop(order), address_out: SHOP });
    expect(made.status).toBe(200);
    const squat = await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: alias(order), address_out: THIEF });
    expect(squat.status).toBe(422);
    expect(squat.body).toEqual(refused);
    // Another asset of the family, another transport: the same answer.
    const token = await callCreate(api, '/api/erc20_usdt/create', 'GET query', { callback_url: alias(order), address_out: THIEF });
    expect(token.body).toEqual(refused);
    const same = await callCreate(api, '/api/eth/create', 'POST form', { callback_url: alias(order), address_out: SHOP.toLowerCase() });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(made.body);
    // Nothing was stored for the alias: the shop's URL stays as given, the only one of its key.
    const rows = await queryRows<{ callback_url: string }>(api.db, sql`SELECT callback_url FROM payment_configs WHERE callback_key = ${callbackWireKey(shop(order))}`);
    expect(rows).toEqual([{ callback_url: shop(order) }]);
    const aliasRows = await queryRows(api.db, sql`SELECT 1 FROM payment_configs WHERE callback_url = ${alias(order)}`);
    expect(aliasRows).toEqual([]);
  });

  it('the alias first: the shop\'s own URL is then the alias, refused with another payout', async () => {
    const order = ++n;
    const first = await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: `https://SHOP.example:443/cb?order=${order}&`, address_out: THIEF });
    expect(first.status).toBe(200);
    const r = await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: `https://shop.example/cb?order=${order}`, address_out: SHOP });
    expect(r.body).toEqual(refused);
  });

  it('other ports, paths and query orders are other configurations', async () => {
    const order = ++n;
    const urls = [
      `https://shop.example/cb?order=${order}`,
      `https://shop.example:8443/cb?order=${order}`,
      `https://shop.example/cb/?order=${order}`,
      `https://shop.example/cb?order=${order}&x=`,
      `https://shop.example/CB?order=${order}`,
      `https://shop.example.com/cb?order=${order}`,
    ];
    const made = [];
    for (const [i, url] of urls.entries()) {
      made.push(await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: url, address_out: merchantAddress('ethereum', 'mainnet', BigInt(20 + i)) }));
    }
    expect(made.map((r) => r.status)).toEqual(urls.map(() => 200));
    expect(new Set(made.map((r) => r.body.address_in)).size).toBe(urls.length);
  });

  it('aliases raced with different payouts: one configuration, every other payout refused', async () => {
    const order = ++n;
    const spellings = ALIASES.filter(([, shop]) => shop(0) === 'https://shop.example/cb?order=0').map(([, , alias]) => alias(order));
    expect(spellings.length).toBeGreaterThanOrEqual(6);
    const results = await Promise.all(
      spellings.map((url, i) => callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: url, address_out: merchantAddress('ethereum', 'mainnet', BigInt(100 + i)) })),
    );
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expect(r.body).toEqual(refused);
    const rows = await queryRows(api.db, sql`SELECT 1 FROM payment_configs WHERE callback_key = ${callbackWireKey(spellings[0])}`);
    expect(rows).toHaveLength(1);
  });
});

describe('the payout is compared in its family\'s canonical form', () => {
  it.each([
    ['btc', merchantAddress('bitcoin'), merchantAddress('bitcoin').toUpperCase(), merchantAddress('bitcoin', 'mainnet', 1n)],
    ['bch', merchantAddress('bitcoincash'), merchantAddress('bitcoincash').replace(/^bitcoincash:/, ''), merchantAddress('bitcoincash', 'mainnet', 1n)],
    ['sol', merchantAddress('solana'), merchantAddress('solana'), merchantAddress('solana', 'mainnet', 1n)],
  ])('%s: the same payout in another spelling is the same, another payout is refused', async (ticker, out, spelled, other) => {
    const callback = `https://shop.example/canonical/${ticker}?order=${++n}`;
    const made = await callCreate(api, `/api/${ticker}/create`, 'POST JSON', { callback_url: callback, address_out: out });
    expect(made.status).toBe(200);
    const again = await callCreate(api, `/api/${ticker}/create`, 'GET query', { callback_url: `${callback}#again`, address_out: spelled });
    expect(again.body).toEqual(made.body);
    const squat = await callCreate(api, `/api/${ticker}/create`, 'POST form', { callback_url: callback, address_out: other });
    expect(squat.body).toEqual(refused);
  });
});
