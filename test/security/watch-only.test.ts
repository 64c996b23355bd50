import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as bip39 from 'bip39';
import { runAdmin } from '../../scripts/admin';
import { readPublished, XPUBS_KEY } from '../../src/db/queries/public-material';
import { createTestDatabase } from '../helpers/db';
import { sql } from 'drizzle-orm';
import { BIP32Factory } from 'bip32';
import * as ecc from 'tiny-secp256k1';
import { deriveAddressIn } from '../../src/chains/addresses';
import type { ChainMode } from '../../src/chains/config';
import { HdSeed } from '../../src/chains/keys';
import { exportPublicKeys, watchOnlyAddressIn } from '../../src/addresses/watch-only';
import { NETWORKS } from '../../src/domain/assets';
import { registry } from '../../src/observability/metrics';
import { TEST_MNEMONIC, allChains, callCreate, merchantAddress, queryRows, startApi, type TestApi } from '../api/helpers';

/**
 * The API derives deposit addresses from public material only (DESIGN 9): for every BIP32 network the
 * address from the account xpub is the one the worker derives from the seed to sign the forward; Solana
 * addresses come from the worker's pool, taken atomically; a create that finds the pool dry waits for the refill (counted), and answers 1501 only when
 * none comes within the wait.
 */
const bip32 = BIP32Factory(ecc);
const seed = HdSeed.fromMnemonic(bip39.generateMnemonic(256));
const keys = exportPublicKeys(seed);
const bip32Networks = Object.keys(NETWORKS).filter((n) => NETWORKS[n].family !== 'sol');

/** Deterministic spread over the whole index range, ends included. */
function indices(n: number): bigint[] {
  const out = [0n, 1n, 2n ** 31n - 1n];
  let x = 0x9e3779b9n;
  while (out.length < n) {
    x = (x * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
    out.push(x % 2n ** 31n);
  }
  return out;
}

describe('watch-only derivation', () => {
  it('publishes extended public keys only', () => {
    expect(Object.keys(keys.xpubs).sort()).toEqual(bip32Networks.sort());
    for (const xpub of Object.values(keys.xpubs)) {
      expect(xpub).toMatch(/^xpub/);
      expect(bip32.fromBase58(xpub).isNeutered()).toBe(true);
    }
    expect(JSON.stringify(keys)).not.toMatch(/xprv|tprv/);
  });

  it.each(bip32Networks.flatMap((n) => (['mainnet', 'testnet', 'regtest'] as ChainMode[]).map((m) => [n, m] as const)))(
    '%s %s: the API\'s address equals the worker\'s at 150 indices',
    (network, mode) => {
      for (const i of indices(150)) expect(watchOnlyAddressIn(keys, network, mode, i)).toBe(deriveAddressIn(seed, network, mode, i));
    },
  );
});

describe('the Solana address pool', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({ chains: allChains('mainnet', ['solana']) });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('hands out each pooled address once under concurrent creates, each the worker\'s address at its index', async () => {
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, k) =>
        callCreate(api, '/api/sol/create', 'POST JSON', { callback_url: `https://shop.example/pool?k=${k}`, address_out: merchantAddress('solana') }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(25).fill(200));
    const addresses = results.map((r) => r.body.address_in as string);
    expect(new Set(addresses).size).toBe(25);
    const rows = await queryRows<{ address_in: string; derivation_index: string }>(
      api.db,
      sql`SELECT address_in, derivation_index FROM payment_configs WHERE ticker = 'sol'`,
    );
    expect(rows).toHaveLength(25);
    const testSeed = HdSeed.fromMnemonic(TEST_MNEMONIC);
    for (const r of rows) expect(r.address_in).toBe(deriveAddressIn(testSeed, 'solana', 'mainnet', BigInt(r.derivation_index)));
  });

  const emptyCount = async () => (await registry.getSingleMetric('gateway_address_pool_empty_total')!.get()).values.reduce((a, v) => a + v.value, 0);

  it('a create that finds the pool dry waits for the refill and gets the refilled address, counted', async () => {
    await api.db.execute(sql`UPDATE address_pool SET taken_at = now() WHERE taken_at IS NULL`);
    const before = await emptyCount();
    const pending = callCreate(api, '/api/sol/create', 'POST JSON', { callback_url: 'https://shop.example/pool?wait=1', address_out: merchantAddress('solana') });
    await new Promise((r) => setTimeout(r, 700));
    // What the worker's refill does: one address free again.
    const [freed] = await queryRows<{ address: string }>(
      api.db,
      sql`UPDATE address_pool SET taken_at = NULL WHERE derivation_index = (SELECT max(derivation_index) FROM address_pool) RETURNING address`,
    );
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.body.address_in).toBe(freed.address);
    expect(await emptyCount()).toBeGreaterThan(before);
  });

  it('a pool that stays dry for the whole wait answers 1501, and nothing of that create stays behind', async () => {
    await api.db.execute(sql`UPDATE address_pool SET taken_at = now() WHERE taken_at IS NULL`);
    const t = Date.now();
    const r = await callCreate(api, '/api/sol/create', 'POST JSON', { callback_url: 'https://shop.example/pool?dry=1', address_out: merchantAddress('solana') });
    expect(Date.now() - t).toBeGreaterThanOrEqual(9_000);
    expect(r.status).toBe(500);
    expect(r.body).toMatchObject({ status: 'error', code: 1501, error: 'INTERNAL_GATEWAY_ERROR' });
    await api.db.execute(sql`UPDATE address_pool SET taken_at = NULL WHERE derivation_index = (SELECT max(derivation_index) FROM address_pool)`);
    const again = await callCreate(api, '/api/sol/create', 'POST JSON', { callback_url: 'https://shop.example/pool?dry=1', address_out: merchantAddress('solana') });
    expect(again.status).toBe(200);
  });
});

describe('npm run admin -- export-public-keys', () => {
  it('prints the xpubs of the seed and publishes them, never a private key, never a new seed', async () => {
    const mnemonic = bip39.generateMnemonic(256);
    const database = await createTestDatabase();
    try {
      const lines: string[] = [];
      expect(await runAdmin(['export-public-keys'], (l) => lines.push(l), { GATEWAY_MNEMONIC: mnemonic, DATABASE_URL: database.url })).toBe(0);
      const expected = exportPublicKeys(HdSeed.fromMnemonic(mnemonic));
      expect(JSON.parse(lines[0])).toEqual(expected);
      expect(lines.join('\n')).not.toMatch(/xprv|abandon|PRIVATE/);
      expect(lines.join('\n')).not.toContain(mnemonic.split(' ').slice(0, 3).join(' '));
      expect(JSON.parse((await readPublished(database.db, XPUBS_KEY))!)).toEqual(expected);
      const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-noseed-'));
      expect(await runAdmin(['export-public-keys'], (l) => lines.push(l), { DATA_DIR: empty })).toBe(2);
      expect(fs.readdirSync(empty)).toEqual([]);
    } finally {
      await database.drop();
    }
  });
});
