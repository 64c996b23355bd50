import { HdSeed } from '../../src/chains/keys';
import { poolFree } from '../../src/db/queries/public-material';
import { startPublisher } from '../../src/addresses/public-material';
import { allChains, callCreate, merchantAddress, startApi, TEST_MNEMONIC, type TestApi } from './helpers';

/**
 * Issue 56 item 4: Solana's pre-derived pool is topped up within a second of creates taking from it, not at
 * the next publish of the public material (every 10 s), so creates keep getting addresses wave after wave.
 */

let api: TestApi;
let publisher: { stop(): Promise<void> };
beforeAll(async () => {
  api = await startApi();
  // Key rotation never within the test: only the pool's own top-up refills.
  publisher = await startPublisher({ db: api.db, seed: HdSeed.fromMnemonic(TEST_MNEMONIC), chains: allChains(), poolSize: 60 }, 3_600_000, undefined, 250);
});
afterAll(async () => {
  await publisher.stop();
  await api.close();
});

async function refilled(deadlineMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < deadlineMs) {
    if ((await poolFree(api.db, 'solana')) >= 60) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the pool was not refilled within ${deadlineMs} ms (free: ${await poolFree(api.db, 'solana')})`);
}

it('three waves of 50 concurrent sol creates: every one gets an address, the pool full again within seconds after each', async () => {
  let order = 0;
  const addresses = new Set<unknown>();
  for (let wave = 0; wave < 3; wave++) {
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        callCreate(api, '/api/sol/create', 'POST JSON', { callback_url: `https://shop.example/pool?order=${++order}`, address_out: merchantAddress('solana') }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    for (const r of results) addresses.add(r.body.address_in);
    await refilled(5_000);
  }
  expect(addresses.size).toBe(150);
});
