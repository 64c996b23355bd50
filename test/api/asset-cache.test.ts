import { sql } from 'drizzle-orm';
import { AssetStateCache } from '../../api/asset-cache';
import { startApi, type TestApi } from './helpers';

/**
 * The production API reads the asset state (enabled, fee, minimums) at most once per TTL
 * (api/asset-cache.ts): an operator's change shows within it, a failed read is never kept.
 */

let api: TestApi;
const TTL = 400;
beforeAll(async () => {
  api = await startApi();
  api.deps.assetCache = new AssetStateCache(api.db, TTL);
});
afterAll(() => api.close());
afterEach(() => api.db.execute(sql`DELETE FROM assets; DELETE FROM asset_minimums`));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('an operator\'s change shows in catalog, info and create within the TTL', async () => {
  expect((await api.json('/api/doge/info')).status).toBe(200);
  await api.db.execute(sql`INSERT INTO assets (ticker, enabled) VALUES ('doge', false)`);
  await api.db.execute(sql`INSERT INTO asset_minimums (ticker, value_base, computed_at) VALUES ('btc', 123456, now())`);
  await sleep(TTL + 50);
  expect(Object.keys((await api.json('/api/cryptocurrencies')).body)).not.toContain('doge');
  expect((await api.json('/api/doge/info')).body).toMatchObject({ code: 1102 });
  expect((await api.json('/api/doge/create?callback_url=https://shop.example/c&address_out=x')).body).toMatchObject({ code: 1102 });
  expect((await api.json('/api/cryptocurrencies')).body.btc).toMatchObject({ minimum: '0.00123456' });
  expect((await api.json('/api/btc/info')).body).toMatchObject({ minimum_transaction: '0.00123456' });
  // Logs stay readable for a disabled asset (any known ticker).
  expect((await api.json(`/api/doge/logs?callback=${encodeURIComponent('https://shop.example/none')}`)).body).toMatchObject({ code: 1201 });
});

it('one read serves concurrent requests; a failed read answers 1501 and is not kept', async () => {
  const cache = new AssetStateCache(api.db, TTL);
  const broken = new AssetStateCache({ select: () => { throw new Error('database gone'); }, execute: () => Promise.reject(new Error('database gone')) } as never, TTL);
  api.deps.assetCache = broken;
  try {
    expect((await api.json('/api/cryptocurrencies')).status).toBe(500);
    expect((await api.json('/api/eth/info')).body).toMatchObject({ code: 1501 });
  } finally {
    api.deps.assetCache = cache;
    api.logged.length = 0;
  }
  const answers = await Promise.all(Array.from({ length: 20 }, () => api.json('/api/eth/info')));
  expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
});
