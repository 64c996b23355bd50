import * as bip39 from 'bip39';
import { sql } from 'drizzle-orm';
import { deriveAddressIn } from '../../src/chains/addresses';
import type { ChainMode } from '../../src/chains/config';
import { HdSeed } from '../../src/chains/keys';
import { peekNextIndex, storeDerivedRun } from '../../src/db/queries/derivation';
import { exportPublicKeys, watchOnlyAddressIn } from '../../src/addresses/watch-only';
import { NETWORKS } from '../../src/domain/assets';
import { DerivedAddressSupply, derivedSource, xpubDeriver } from '../../src/addresses/derived-addresses';
import { threadDeriver } from '../../src/addresses/derive-thread';
import { publicMaterialFrom } from '../../src/addresses/public-material';
import { TEST_MNEMONIC, callCreate, merchantAddress, queryRows, startApi, type TestApi } from '../api/helpers';

/**
 * The API stores addresses derived from the xpubs ahead of its creates (src/addresses/derived-addresses.ts):
 * each must be the worker's address at its index, a seed or chain mode never reads another's, and a create
 * whose index has no stored address yet stores it and goes on without skipping an index.
 */
const seed = HdSeed.fromMnemonic(bip39.generateMnemonic(256));
const keys = exportPublicKeys(seed);
const bip32Networks = Object.keys(NETWORKS).filter((n) => NETWORKS[n].family !== 'sol');
const MODES: ChainMode[] = ['mainnet', 'testnet', 'regtest'];

describe('xpubDeriver', () => {
  it.each(bip32Networks.flatMap((n) => MODES.map((m) => [n, m] as const)))('%s %s: equals the worker\'s and watchOnlyAddressIn', (network, mode) => {
    const derive = xpubDeriver(keys, network, mode);
    for (const i of [0n, 1n, 2n, 77n, 1000n, 65_535n, 2n ** 31n - 1n]) {
      expect(derive(i)).toBe(deriveAddressIn(seed, network, mode, i));
      expect(derive(i)).toBe(watchOnlyAddressIn(keys, network, mode, i));
    }
    expect(() => derive(2n ** 31n)).toThrow(RangeError);
  });

  it('the derivation thread gives the same runs of addresses as the caller\'s thread, and its errors', async () => {
    for (const [network, mode] of [['ethereum', 'mainnet'], ['bitcoin', 'regtest'], ['litecoin', 'mainnet'], ['bitcoincash', 'testnet']] as const) {
      const inline = xpubDeriver(keys, network, mode);
      const run = await threadDeriver(keys.xpubs[network], network, mode, inline)(1000n, 70);
      expect(run).toEqual(Array.from({ length: 70 }, (_, k) => deriveAddressIn(seed, network, mode, 1000n + BigInt(k))));
    }
    const derive = threadDeriver(keys.xpubs.bitcoin, 'bitcoin', 'mainnet', xpubDeriver(keys, 'bitcoin', 'mainnet'));
    await expect(derive(2n ** 31n - 1n, 2)).rejects.toThrow(RangeError);
  });

  it('a source names network, mode and xpub', () => {
    const other = exportPublicKeys(HdSeed.fromMnemonic(bip39.generateMnemonic(256)));
    const a = derivedSource(keys.xpubs.bitcoin, 'bitcoin', 'mainnet');
    expect(new Set([a, derivedSource(keys.xpubs.bitcoin, 'bitcoin', 'testnet'), derivedSource(other.xpubs.bitcoin, 'bitcoin', 'mainnet')]).size).toBe(3);
  });
});

describe('stored derived addresses', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('a create with no stored address stores them from the counter on; every stored one is the worker\'s', async () => {
    const test = HdSeed.fromMnemonic(TEST_MNEMONIC);
    // An existing deployment: the counter is far ahead and nothing was derived ahead yet.
    await api.db.execute(sql`SELECT setval('derivation_index_ltc', 4999)`);
    const r = await callCreate(api, '/api/ltc/create', 'POST JSON', { callback_url: 'https://shop.example/derived/1', address_out: merchantAddress('litecoin') });
    expect(r.status).toBe(200);
    expect(r.body.address_in).toBe(deriveAddressIn(test, 'litecoin', 'mainnet', 5000n));
    const stored = await queryRows<{ derivation_index: string; address: string }>(
      api.db,
      sql`SELECT derivation_index, address FROM derived_addresses WHERE source LIKE 'litecoin:mainnet:%' ORDER BY derivation_index`,
    );
    // From the counter, not from 0; and ahead of it.
    expect(BigInt(stored[0].derivation_index)).toBe(5000n);
    expect(stored.length).toBeGreaterThan(100);
    for (const row of stored.filter((_, k) => k % 37 === 0)) {
      expect(row.address).toBe(deriveAddressIn(test, 'litecoin', 'mainnet', BigInt(row.derivation_index)));
    }
    const next = await callCreate(api, '/api/ltc/create', 'POST JSON', { callback_url: 'https://shop.example/derived/2', address_out: merchantAddress('litecoin') });
    expect(next.body.address_in).toBe(deriveAddressIn(test, 'litecoin', 'mainnet', 5001n));
    // The first create stored the stock before it took an index: none was skipped.
    expect(await peekNextIndex(api.db, 'ltc')).toBe(5002n);
  });

  it('a run is stored at consecutive indexes from its start, rows already there are kept, and a comma is refused', async () => {
    const rows = () => queryRows<{ derivation_index: string; address: string }>(api.db, sql`SELECT derivation_index, address FROM derived_addresses WHERE source = 'test:run' ORDER BY 1`);
    await storeDerivedRun(api.db, 'test:run', 2n ** 31n - 3n, ['a1', 'a2']);
    await storeDerivedRun(api.db, 'test:run', 2n ** 31n - 2n, ['b2', 'b3']);
    await storeDerivedRun(api.db, 'test:run', 7n, []);
    expect((await rows()).map((r) => [r.derivation_index, r.address])).toEqual([
      [String(2n ** 31n - 3n), 'a1'],
      [String(2n ** 31n - 2n), 'a2'],
      [String(2n ** 31n - 1n), 'b3'],
    ]);
    await expect(storeDerivedRun(api.db, 'test:run', 0n, ['c0', 'c,1'])).rejects.toThrow('comma');
    await expect(storeDerivedRun(api.db, 'test:run', 0n, [''])).rejects.toThrow('empty');
    expect(await rows()).toHaveLength(3);
  });

  it('a run from the derivation thread that is not the derivation of its indexes is never stored', async () => {
    const inline = xpubDeriver(keys, 'litecoin', 'mainnet');
    const right = threadDeriver(keys.xpubs.litecoin, 'litecoin', 'mainnet', inline);
    // Another request's answer: the addresses of the next indexes.
    const shifted = async (start: bigint, count: number) => right(start + 1n, count);
    const storedFrom256 = async (source: string) =>
      Number((await queryRows<{ n: string }>(api.db, sql`SELECT count(*) AS n FROM derived_addresses WHERE source = ${source} AND derivation_index >= 256`))[0].n);
    for (const [source, range, expected] of [['test:shifted', shifted, false], ['test:right', right, true]] as const) {
      // No counter for the family: the first refill stores 0..255 on this thread, then fills on from 256 with `range`.
      const supply = new DerivedAddressSupply(api.db, source, `nofamily-${source}`, inline, range);
      await supply.refill();
      await supply.refill(); // waits for the background fill the first one started
      expect([source, (await storedFrom256(source)) > 0]).toEqual([source, expected]);
    }
    const stored = await queryRows<{ derivation_index: string; address: string }>(api.db, sql`SELECT derivation_index, address FROM derived_addresses WHERE source = 'test:right'`);
    for (const row of stored.filter((_, k) => k % 97 === 0)) expect(row.address).toBe(inline(BigInt(row.derivation_index)));
  });

  it('a refill after the stock is gone goes on at the counter, any number of processes at once', async () => {
    const material = publicMaterialFrom(api.db);
    const { supply } = await material.depositAddresses('bitcoin', 'mainnet');
    const published = exportPublicKeys(HdSeed.fromMnemonic(TEST_MNEMONIC));
    const second = new DerivedAddressSupply(api.db, supply!.source, 'btc', xpubDeriver(published, 'bitcoin', 'mainnet'));
    await api.db.execute(sql`SELECT setval('derivation_index_btc', 41)`);
    await Promise.all([supply!.refill(), supply!.refill(), second.refill()]);
    const [row] = await queryRows<{ lo: string; n: string }>(
      api.db,
      sql`SELECT min(derivation_index) AS lo, count(*) AS n FROM derived_addresses WHERE source = ${supply!.source}`,
    );
    expect(BigInt(row.lo)).toBe(42n);
    expect(Number(row.n)).toBeGreaterThanOrEqual(256);
    expect(api.logged).toEqual([]);
  });
});
