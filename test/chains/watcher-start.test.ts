/**
 * Where a network's watcher starts when no cursor is stored yet, on a live anvil and the real PostgreSQL
 * (reached through a proxy that can be down in the first test):
 * - the head the watcher saw first, even when the database was away then: a deposit mined while the
 *   database is away, to an address created before, is matched once it is back (the start used to be the
 *   head at the first pass that reached the database: after the deposit);
 * - before the network's first configuration when there is one: a deposit paid before the watcher ever
 *   ran is read (the start used to be the head);
 * - the head when there is none.
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import { Pool } from 'pg';
import { type JsonRpcProvider, Wallet, parseEther } from 'ethers';
import type { Db } from '../../src/db/client';
import * as schema from '../../src/db/schema';
import { chainCursors, paymentConfigs } from '../../src/db/schema';
import type { AnvilDevnet } from '../../devnet/anvil';
import type { createAdapterRegistry } from '../../src/chains/factory';
import { firstStart } from '../../src/detection/first-start';
import { readCursor, scanOnce, startWatchers, type MatchedDeposit } from '../../src/detection/watcher';
import type { createTestDatabase } from '../helpers/db';
import { anvilWatchBed, type AnvilWatchBed } from '../helpers/anvil-watch';
import { waitFor } from '../helpers/process';
import { tcpProxy } from '../helpers/tcp-proxy';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(120_000);

let bed: AnvilWatchBed;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let node: AnvilDevnet;
/** The database without a proxy, the chain's adapters, and a provider for the customer's payments. */
let direct: Db;
let registry: ReturnType<typeof createAdapterRegistry>;
let provider: JsonRpcProvider;

beforeAll(async () => {
  bed = await anvilWatchBed('gw-watch-start-');
  ({ database, db: direct, node, registry, provider } = bed);
});

afterAll(async () => {
  await bed?.close();
});

test('a deposit mined while the database was away since the watcher started is matched once it is back', async () => {
  const adapter = await registry.get('ethereum');
  const addressIn = adapter.deriveAddressIn(7n);
  await direct.insert(paymentConfigs).values({
    ...callbackColumns('https://shop.example/cb/start'), ticker: 'eth', family: 'evm', addressIn, addressOut: Wallet.createRandom().address,
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
  const seen: MatchedDeposit[] = [];
  let failures = 0;
  const watchers = startWatchers({
    networks: registry.networks(), adapter: (n) => registry.get(n), db, intervalMs: 100,
    onMatch: async (_n, m) => void seen.push(...m), onError: () => void failures++,
  });
  try {
    await waitFor(() => failures >= 2, 10_000, 'passes failing while the database is away');
    const paid = await (await new Wallet(node.customerKey, provider).sendTransaction({ to: addressIn, value: parseEther('0.04') })).wait();
    // Blocks after the deposit's, so that the head at the database's return is past it.
    await provider.send('anvil_mine', ['0x3']);
    proxy.down(false);
    await waitFor(() => seen.length === 1, 30_000, 'the watcher to match the deposit mined while the database was away');
    expect(seen[0].deposit.txid).toBe(paid!.hash);
    expect(seen[0].deposit.amount).toBe(parseEther('0.04'));
    // The pass stores its cursor after its matches are handed on (a match is never skipped): wait for that write.
    await waitFor(async () => ((await readCursor(direct, 'ethereum'))?.height ?? -1n) >= BigInt(paid!.blockNumber), 10_000, 'the cursor past the deposit');
  } finally {
    await watchers.stop();
    await pool.end().catch(() => undefined);
    await proxy.close();
  }
});

test('a deposit paid before the watcher first ran, to an address created before, is matched by its first start', async () => {
  const seen: MatchedDeposit[] = [];
  let watchers: { stop(): Promise<void> } | undefined;
  try {
    // The worker's first start: no cursor stored (the test above stored one; it goes).
    await direct.delete(chainCursors);
    const adapter = await registry.get('ethereum');
    const addressIn = adapter.deriveAddressIn(8n);
    await direct.insert(paymentConfigs).values({
      ...callbackColumns('https://shop.example/cb/before-first-start'), ticker: 'eth', family: 'evm', addressIn, addressOut: Wallet.createRandom().address,
      derivationIndex: 8n, notifyPending: false, notifyConfirmations: 12, post: 0, json: 0, convert: 0, priority: 'default',
    });
    const paid = await (await new Wallet(node.customerKey, provider).sendTransaction({ to: addressIn, value: parseEther('0.03') })).wait();
    await provider.send('anvil_mine', ['0x5']);
    const head = await provider.getBlockNumber();
    watchers = startWatchers({
      networks: ['ethereum'], adapter: (n) => registry.get(n), db: direct, intervalMs: 100, onMatch: async (_n, m) => void seen.push(...m),
    });
    await waitFor(async () => ((await readCursor(direct, 'ethereum'))?.height ?? 0n) >= BigInt(head), 20_000, 'the first start to read up to the head');
    // The first test's deposit, in the blocks read again, is matched again too (its workflow ID absorbs that).
    expect(seen.filter((m) => m.config.addressIn === addressIn).map((m) => [m.deposit.txid, m.deposit.amount])).toEqual([[paid!.hash, parseEther('0.03')]]);
  } finally {
    await watchers?.stop();
  }
});

test('with no configuration of the network, the first start is the head: older blocks are not read', async () => {
  await direct.delete(chainCursors);
  await direct.delete(paymentConfigs);
  const adapter = await registry.get('ethereum');
  const head = await adapter.head();
  const scanned: bigint[] = [];
  const scan = adapter.scan.bind(adapter);
  const counting = Object.assign(Object.create(adapter) as typeof adapter, {
    scan: async (cursor: Parameters<typeof adapter.scan>[0], max?: number) => {
      const batch = await scan(cursor, max);
      scanned.push(...batch.blocks.map((b) => b.height));
      return batch;
    },
  });
  expect(await scanOnce(counting, direct, 'ethereum')).toEqual([]);
  expect(scanned).toEqual([]);
  expect((await readCursor(direct, 'ethereum'))!.height).toBeGreaterThanOrEqual(head.height);
});

test('the first start is the last block stamped before the first configuration, less two minutes', async () => {
  await direct.delete(paymentConfigs);
  const adapter = await registry.get('ethereum');
  await provider.send('anvil_mine', ['0x4']);
  const before = await provider.getBlock('latest');
  // Ten minutes pass on the chain; the configuration is made five minutes into them, three minutes after
  // the margin's start: `before` is the last block stamped before that.
  await provider.send('evm_increaseTime', [600]);
  await provider.send('anvil_mine', ['0x3']);
  const head = await adapter.head();
  await direct.insert(paymentConfigs).values({
    ...callbackColumns('https://shop.example/cb/stamped'), ticker: 'eth', family: 'evm', addressIn: adapter.deriveAddressIn(9n), addressOut: Wallet.createRandom().address,
    derivationIndex: 9n, notifyPending: false, notifyConfirmations: 12, post: 0, json: 0, convert: 0, priority: 'default',
    createdAt: new Date((before!.timestamp + 300) * 1000),
  });
  expect(await firstStart(adapter, direct, 'ethereum', head)).toEqual({ height: BigInt(before!.number), hash: null });
  // A node that serves whole blocks from `before` on only (pruned): the start is just below them.
  const pruned = Object.assign(Object.create(adapter) as typeof adapter, { oldestReadable: async () => BigInt(before!.number) });
  await direct.update(paymentConfigs).set({ createdAt: new Date(0) });
  expect(await firstStart(pruned, direct, 'ethereum', head)).toEqual({ height: BigInt(before!.number) - 1n, hash: null });
  // A configuration made after the head's block: nothing to look back for.
  await direct.update(paymentConfigs).set({ createdAt: new Date(((await provider.getBlock('latest'))!.timestamp + 3600) * 1000) });
  expect(await firstStart(adapter, direct, 'ethereum', head)).toBe(head);
});
