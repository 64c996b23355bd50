import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { chainConfigFromEnv } from '../../src/chains/config';
import { FixedPriceSource, HttpPriceSource, NoPriceSource } from '../../src/prices/source';
import { priceSourceFor } from '../../src/runtime/services';
import { createTestDatabase } from '../helpers/db';

/**
 * No process invents a price: the fixed table serves local regtest chains only; anywhere else the
 * operator names a quote source or says PRICE_SOURCE=none, and a production entry point refuses to start
 * otherwise, with one line.
 */
const mainnet = chainConfigFromEnv({ ETHEREUM_RPC_URL: 'http://127.0.0.1:1' });
const regtest = chainConfigFromEnv({ ETHEREUM_RPC_URL: 'http://127.0.0.1:1', ETHEREUM_CHAIN: 'regtest', LITECOIN_RPC_URL: 'http://127.0.0.1:2', LITECOIN_CHAIN: 'regtest' });

describe('price source', () => {
  it('uses the fixed table only when every network is a local regtest chain', () => {
    expect(priceSourceFor(loadConfig({}), regtest)).toBeInstanceOf(FixedPriceSource);
    expect(() => priceSourceFor(loadConfig({}), mainnet)).toThrow(/^invalid configuration: PRICE_SOURCE_URL must be set/);
    const mixed = { ...regtest, ...chainConfigFromEnv({ SOLANA_RPC_URL: 'http://127.0.0.1:3' }) };
    expect(() => priceSourceFor(loadConfig({}), mixed)).toThrow(/PRICE_SOURCE=none/);
  });

  it('takes PRICE_SOURCE_URL or an explicit PRICE_SOURCE=none, never both', async () => {
    expect(priceSourceFor(loadConfig({ PRICE_SOURCE_URL: 'https://quotes.example/{symbol}' }), mainnet)).toBeInstanceOf(HttpPriceSource);
    const none = priceSourceFor(loadConfig({ PRICE_SOURCE: 'none' }), mainnet);
    expect(none).toBeInstanceOf(NoPriceSource);
    expect(await none.usdt('ETH')).toBeUndefined();
    expect(() => loadConfig({ PRICE_SOURCE: 'fixed' })).toThrow(/^invalid configuration: PRICE_SOURCE/);
    expect(() => loadConfig({ PRICE_SOURCE: 'none', PRICE_SOURCE_URL: 'https://quotes.example/{symbol}' })).toThrow(/not both/);
  });

  it('a production entry point on a mainnet chain with no price source exits 2 with one line', async () => {
    const database = await createTestDatabase();
    try {
      const root = path.resolve(__dirname, '../..');
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        DATABASE_URL: database.url,
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        ETHEREUM_RPC_URL: 'http://127.0.0.1:1',
        DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'gw-price-')),
      };
      for (const entry of ['api', 'worker']) {
        const r = spawnSync(process.execPath, ['--import', 'tsx', `src/entry/${entry}.ts`], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
        expect(r.status).toBe(2);
        const lines = r.stderr.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/^invalid configuration: PRICE_SOURCE_URL must be set \(or PRICE_SOURCE=none/);
      }
    } finally {
      await database.drop();
    }
  }, 120_000);
});
