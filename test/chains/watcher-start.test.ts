/**
 * Where a network's watcher starts when no cursor is stored yet, on a live anvil and the real PostgreSQL
 * reached through a proxy that can be down: the head the watcher saw first, even when the database was
 * away then. A deposit mined while the database is away, to an address created before, is matched once
 * it is back (the start used to be the head at the first pass that reached the database: after the deposit).
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import { Pool } from 'pg';
import { JsonRpcProvider, Network, Wallet, parseEther } from 'ethers';
import type { Db } from '../../src/db/client';
import * as schema from '../../src/db/schema';
import { paymentConfigs } from '../../src/db/schema';
import { startAnvil, type AnvilDevnet } from '../../src/chains/devnet/anvil';
import { EvmAdapter } from '../../src/chains/evm/adapter';
import { createAdapterRegistry } from '../../src/chains/factory';
import { readCursor, startWatchers, type MatchedDeposit } from '../../src/chains/watcher';
import { createTestDatabase } from '../helpers/db';
import { waitFor } from '../helpers/process';
import { tcpProxy } from '../helpers/tcp-proxy';
import { testSeed, tmpDir } from '../helpers/nodes';

jest.setTimeout(120_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let node: AnvilDevnet;
const seed = testSeed();

beforeAll(async () => {
  [database, node] = await Promise.all([createTestDatabase(), startAnvil({ dir: tmpDir('gw-watch-start-') })]);
});

afterAll(async () => {
  await database?.drop();
  await node?.stop();
});

test('a deposit mined while the database was away since the watcher started is matched once it is back', async () => {
  const adapter = new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: node.rpcUrl, chainId: node.chainId, seed, tokens: node.tokens });
  const direct = drizzle(new Pool({ connectionString: database.url, max: 1 }), { schema }) as unknown as Db;
  const addressIn = adapter.deriveAddressIn(7n);
  await direct.insert(paymentConfigs).values({
    callbackUrl: 'https://shop.example/cb/start', ticker: 'eth', family: 'evm', addressIn, addressOut: Wallet.createRandom().address,
    derivationIndex: 7n, notifyPending: false, notifyConfirmations: 12, post: 0, json: 0, convert: 0, priority: 'default',
  });
  expect(await readCursor(direct, 'ethereum')).toBeNull();

  const proxy = await tcpProxy(Number(new URL(database.url).port || 5432));
  proxy.down(true);
  const url = new URL(database.url);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const pool = new Pool({ connectionString: url.toString(), max: 2, connectionTimeoutMillis: 1_000 });
  pool.on('error', () => undefined);
  const db = drizzle(pool, { schema }) as unknown as Db;
  const registry = createAdapterRegistry({ ethereum: { mode: 'regtest', rpcUrl: node.rpcUrl, contracts: node.tokens } }, seed);
  const seen: MatchedDeposit[] = [];
  let failures = 0;
  const watchers = startWatchers({
    networks: registry.networks(), adapter: (n) => registry.get(n), db, intervalMs: 100,
    onMatch: async (_n, m) => void seen.push(...m), onError: () => void failures++,
  });
  const provider = new JsonRpcProvider(node.rpcUrl, Network.from(node.chainId), { staticNetwork: true, cacheTimeout: -1 });
  try {
    await waitFor(() => failures >= 2, 10_000, 'passes failing while the database is away');
    const paid = await (await new Wallet(node.customerKey, provider).sendTransaction({ to: addressIn, value: parseEther('0.04') })).wait();
    // Blocks after the deposit's, so that the head at the database's return is past it.
    await provider.send('anvil_mine', ['0x3']);
    proxy.down(false);
    await waitFor(() => seen.length === 1, 30_000, 'the watcher to match the deposit mined while the database was away');
    expect(seen[0].deposit.txid).toBe(paid!.hash);
    expect(seen[0].deposit.amount).toBe(parseEther('0.04'));
    expect((await readCursor(direct, 'ethereum'))!.height).toBeGreaterThanOrEqual(BigInt(paid!.blockNumber));
  } finally {
    await watchers.stop();
    await registry.close();
    provider.destroy();
    await adapter.close();
    await pool.end().catch(() => undefined);
    await proxy.close();
    await (direct as unknown as { $client: Pool }).$client.end();
  }
});
