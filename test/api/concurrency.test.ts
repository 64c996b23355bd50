import { eq } from 'drizzle-orm';
import { peekNextIndex } from '../../src/db/queries/derivation';
import { paymentConfigs } from '../../src/db/schema';
import { callCreate, merchantAddress, startApi, type TestApi, type Transport } from './helpers';

/** SPEC 4.6 rule 1 under load: twenty concurrent creates with one new callback make exactly one configuration. */

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const ETH_OUT = merchantAddress('ethereum');

it('20 concurrent creates with one new callback → one configuration, twenty identical answers', async () => {
  const callback = 'https://shop.example/race?order=1';
  const transports: Transport[] = ['GET query', 'POST form', 'POST JSON'];
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      callCreate(api, i % 2 ? '/api/eth/create' : '/api/erc20/usdt/create', transports[i % 3], {
        callback_url: callback,
        address_out: ETH_OUT,
        priority: i % 2 ? 'fast' : 'slow',
      }),
    ),
  );
  expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
  const rows = await api.db.select().from(paymentConfigs).where(eq(paymentConfigs.callbackUrl, callback));
  expect(rows).toHaveLength(1);
  for (const r of results) {
    expect(r.body).toMatchObject({ address_in: rows[0].addressIn, address_out: ETH_OUT, callback_url: callback, priority: rows[0].priority });
  }
  // A loser's index is skipped, never handed out: the next new callback takes one above every index taken.
  const next = await peekNextIndex(api.db, 'evm');
  expect(next).toBeGreaterThan(rows[0].derivationIndex);
  const after = await callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: 'https://shop.example/race?order=2', address_out: ETH_OUT });
  const [made] = await api.db.select().from(paymentConfigs).where(eq(paymentConfigs.callbackUrl, 'https://shop.example/race?order=2'));
  expect(made.derivationIndex).toBe(next);
  expect(after.body.address_in).not.toBe(rows[0].addressIn);
  expect(api.logged).toEqual([]);
});

it('20 concurrent creates with twenty new callbacks → twenty distinct deposit addresses', async () => {
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: `https://shop.example/many/${i}`, address_out: ETH_OUT }),
    ),
  );
  expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
  expect(new Set(results.map((r) => r.body.address_in)).size).toBe(20);
});

it('the same new callback raced from two families → one wins, the other gets 1202', async () => {
  const callback = 'https://shop.example/race-family';
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      i % 2
        ? callCreate(api, '/api/eth/create', 'POST JSON', { callback_url: callback, address_out: ETH_OUT })
        : callCreate(api, '/api/sol/create', 'POST JSON', { callback_url: callback, address_out: merchantAddress('solana') }),
    ),
  );
  const rows = await api.db.select().from(paymentConfigs).where(eq(paymentConfigs.callbackUrl, callback));
  expect(rows).toHaveLength(1);
  const winner = rows[0].family === 'evm' ? 1 : 0;
  results.forEach((r, i) => {
    if (i % 2 === winner) expect(r.status).toBe(200);
    else expect(r.body).toMatchObject({ code: 1202 });
  });
});
