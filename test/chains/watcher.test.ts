/**
 * The watcher on a live anvil and the real PostgreSQL: one payment_configs query per block whatever the
 * number of watched addresses, a durable cursor (a restart neither misses nor repeats), and a block
 * whose onMatch failed is read again.
 */
import { eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Pool } from 'pg';
import { Contract, JsonRpcProvider, Network, Wallet, parseEther } from 'ethers';
import { openPostgres, type Db } from '../../src/db/client';
import { rowsOf } from '../../src/db/prepared';
import * as schema from '../../src/db/schema';
import { paymentConfigs, payments } from '../../src/db/schema';
import { depositKey } from '../../src/chains/adapter';
import { depositInput, recordDetectedDeposits } from '../../src/runtime/worker';
import { recordObserved } from '../../activities/observed';
import { depositsObserved } from '../../src/observability/metrics';
import { EvmAdapter } from '../../src/chains/evm/adapter';
import { ERC20 } from '../../src/chains/evm/erc20';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { jsonRpc } from '../../src/chains/json-rpc';
import { readCursor, scanOnce, startWatchers, type MatchedDeposit } from '../../src/detection/watcher';
import { createAdapterRegistry } from '../../src/chains/factory';
import { createTestDatabase } from '../helpers/db';
import { isAlive, waitFor } from '../helpers/process';
import { testSeed, tmpDir } from '../helpers/nodes';
import { callbackColumns, callbackValuesSeries } from '../helpers/callback-columns';

jest.setTimeout(120_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let node: AnvilDevnet;
let pool: Pool;
let db: Db;
const queries: string[] = [];
const seed = testSeed();
let adapter: EvmAdapter;
let customer: Wallet;
let provider: JsonRpcProvider;

const configRow = (ticker: string, index: bigint) => ({
  ...callbackColumns(`https://shop.example/cb/${ticker}/${index}`),
  ticker,
  family: 'evm',
  addressIn: adapter.deriveAddressIn(index),
  addressOut: Wallet.createRandom().address,
  derivationIndex: index,
  notifyPending: false,
  notifyConfirmations: 12,
  post: 0,
  json: 0,
  convert: 0,
  priority: 'default',
});

const configQueries = () => queries.filter((q) => /from "payment_configs"/i.test(q)).length;
const mine = (n: number) => jsonRpc(node.rpcUrl, 'anvil_mine', [`0x${n.toString(16)}`]);

beforeAll(async () => {
  database = await createTestDatabase();
  node = await startAnvil({ dir: tmpDir('gw-watch-') });
  pool = new Pool({ connectionString: database.url, max: 2 });
  db = drizzle(pool, { schema, logger: { logQuery: (q) => void queries.push(q) } }) as unknown as Db;
  adapter = new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: node.rpcUrl, chainId: node.chainId, seed, tokens: node.tokens });
  provider = new JsonRpcProvider(node.rpcUrl, Network.from(node.chainId), { staticNetwork: true, cacheTimeout: -1 });
  customer = new Wallet(node.customerKey, provider);
  await db.insert(paymentConfigs).values([configRow('eth', 1n), configRow('erc20_usdt', 2n)]);
  // Thousands of other watched addresses: they must not change how many queries a block costs.
  await db.execute(sql`INSERT INTO payment_configs (callback_url, callback_key, callback_host, ticker, family, address_in, address_out, derivation_index,
    notify_pending, notify_confirmations, post, json, convert, priority)
    SELECT ${callbackValuesSeries('https://other.example/', sql`g`)}, 'eth', 'evm', '0x' || lpad(to_hex(g), 40, '0'), '0x' || lpad(to_hex(g), 40, '0'), 1000 + g,
      false, 12, 0, 0, 0, 'default' FROM generate_series(1, 5000) g`);
});

afterAll(async () => {
  provider?.destroy();
  await adapter?.close();
  await pool?.end();
  await database?.drop();
  await node?.stop();
  if (node) expect(isAlive(node.pid)).toBe(false);
});

test('first pass stores the head as cursor and reports nothing from history', async () => {
  expect(await scanOnce(adapter, db, 'ethereum')).toEqual([]);
  const head = await adapter.head();
  expect(await readCursor(db, 'ethereum')).toEqual({ height: head.height, hash: head.hash });
});

test('a pass that finds no new block writes nothing (the watcher polls often)', async () => {
  await scanOnce(adapter, db, 'ethereum'); // up to the head
  queries.length = 0;
  expect(await scanOnce(adapter, db, 'ethereum')).toEqual([]);
  expect(queries.filter((q) => /^(insert|update|delete)/i.test(q.trim()))).toEqual([]);
  await mine(1);
  await scanOnce(adapter, db, 'ethereum');
  expect(queries.filter((q) => /insert into "chain_cursors"/i.test(q))).toHaveLength(1);
});

test('each block is matched with one query; only configured recipients of the right ticker match', async () => {
  const before = (await readCursor(db, 'ethereum'))!;
  const ethIn = adapter.deriveAddressIn(1n);
  const tokenIn = adapter.deriveAddressIn(2n);
  const token = new Contract(node.tokens.erc20_usdt, ERC20, customer);
  await (await customer.sendTransaction({ to: ethIn, value: parseEther('0.3') })).wait();
  await (await token.getFunction('transfer')(tokenIn, 5_000_000n)).wait();
  await (await token.getFunction('transfer')(ethIn, 1_000_000n)).wait(); // a token to an eth-only config: no match
  await (await customer.sendTransaction({ to: Wallet.createRandom().address, value: 1n })).wait();
  await mine(3);
  queries.length = 0;
  const matched = await scanOnce(adapter, db, 'ethereum');
  const after = (await readCursor(db, 'ethereum'))!;
  const blocks = Number(after.height - before.height);
  expect(blocks).toBe(7);
  // Four blocks carry payments, three are empty: four queries, never one per watched address.
  expect(configQueries()).toBe(4);
  expect(matched.map((m) => [m.config.ticker, m.deposit.recipient, m.deposit.amount])).toEqual([
    ['eth', ethIn, parseEther('0.3')],
    ['erc20_usdt', tokenIn, 5_000_000n],
  ]);
});

test('a restart continues from the durable cursor: nothing repeated, nothing missed', async () => {
  expect(await scanOnce(adapter, db, 'ethereum')).toEqual([]);
  await (await customer.sendTransaction({ to: adapter.deriveAddressIn(1n), value: parseEther('0.2') })).wait();
  // A new process: new adapter, new pool, same database.
  const adapter2 = new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: node.rpcUrl, chainId: node.chainId, seed, tokens: node.tokens });
  const pool2 = new Pool({ connectionString: database.url, max: 1 });
  try {
    const db2 = drizzle(pool2, { schema }) as unknown as Db;
    const matched = await scanOnce(adapter2, db2, 'ethereum');
    expect(matched.map((m) => m.deposit.amount)).toEqual([parseEther('0.2')]);
    expect(await scanOnce(adapter2, db2, 'ethereum')).toEqual([]);
  } finally {
    await adapter2.close();
    await pool2.end();
  }
});

test('a block whose onMatch failed is read again; the cursor does not pass it', async () => {
  const before = (await readCursor(db, 'ethereum'))!;
  await (await customer.sendTransaction({ to: adapter.deriveAddressIn(1n), value: parseEther('0.1') })).wait();
  const failing = async () => {
    throw new Error('workflow service down');
  };
  await expect(scanOnce(adapter, db, 'ethereum', { onMatch: failing })).rejects.toThrow('workflow service down');
  expect(await readCursor(db, 'ethereum')).toEqual(before);
  const seen: string[] = [];
  const matched = await scanOnce(adapter, db, 'ethereum', { onMatch: async (m) => void seen.push(...m.map((x) => x.deposit.txid)) });
  expect(matched).toHaveLength(1);
  expect(seen).toEqual([matched[0].deposit.txid]);
});

test('a deposit is recorded with the confirmations the watcher saw; the workflow\'s later record keeps that row; it is counted once', async () => {
  const observed = async () => (await depositsObserved.get()).values.find((v) => v.labels.ticker === 'eth')?.value ?? 0;
  const counted = await observed();
  await scanOnce(adapter, db, 'ethereum');
  const receipt = (await (await customer.sendTransaction({ to: adapter.deriveAddressIn(1n), value: parseEther('0.0001') })).wait())!;
  await mine(2);
  const head = await provider.getBlockNumber();
  const matched = await scanOnce(adapter, db, 'ethereum', { onMatch: (m) => recordDetectedDeposits(db, m) });
  expect(matched.map((m) => [m.deposit.txid, m.confirmations])).toEqual([[receipt.hash, head - receipt.blockNumber + 1]]);
  expect(head - receipt.blockNumber + 1).toBe(3);
  expect(await observed()).toBe(counted + 1);
  // The deposit workflow's first activity, run twice (a retry), and the block matched again (another worker).
  const again = (await recordObserved(db, depositInput(matched[0]))).payment;
  await recordObserved(db, depositInput(matched[0]));
  await recordDetectedDeposits(db, matched);
  expect(again.confirmations).toBe(3);
  const rows = await db.select().from(payments).where(eq(payments.depositKey, depositKey(matched[0].deposit)));
  expect(rows.map((r) => [r.uuid, r.confirmations, r.result])).toEqual([[again.uuid, 3, 'pending']]);
  expect(await observed()).toBe(counted + 1);
});

test('a reorg of the cursor block rewinds the cursor onto the canonical chain', async () => {
  const snap = await jsonRpc<string>(node.rpcUrl, 'evm_snapshot');
  await mine(2);
  await scanOnce(adapter, db, 'ethereum');
  const orphaned = (await readCursor(db, 'ethereum'))!;
  await jsonRpc(node.rpcUrl, 'evm_revert', [snap]);
  await mine(4);
  await scanOnce(adapter, db, 'ethereum');
  await scanOnce(adapter, db, 'ethereum');
  const cursor = (await readCursor(db, 'ethereum'))!;
  const canonical = await provider.getBlock(Number(cursor.height));
  expect(cursor.hash).toBe(canonical!.hash);
  expect(cursor.hash).not.toBe(orphaned.hash);
});

/** A TCP proxy in front of the node whose connections the test can cut (a node or network that drops the feed). */
test('a pass another process is making is skipped, not waited for and made again; the loop goes on once that one is done', async () => {
  const [other, mine] = [await openPostgres(database.url, { migrate: false }), await openPostgres(database.url, { migrate: false })];
  const registry = createAdapterRegistry({ ethereum: { mode: 'regtest', rpcUrl: node.rpcUrl, contracts: node.tokens } }, seed);
  let release!: () => void;
  let held = false;
  const holding = other.withLock('watch:ethereum', async () => {
    held = true;
    await new Promise<void>((r) => (release = r));
  });
  let passes = 0;
  let watchers: { stop(): Promise<void> } | undefined;
  try {
    await waitFor(() => held, 10_000, 'the other process to hold the watch lock');
    watchers = startWatchers({
      networks: registry.networks(), adapter: (n) => registry.get(n), db, intervalMs: 100, ifFree: mine.ifFree,
      onMatch: async () => undefined, onBatch: async () => void passes++,
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(passes).toBe(0);
    // Skipped, not queued: no session of this process waits for the lock (a waiting withLock would show here).
    const [waiting] = rowsOf<{ n: number }>(await db.execute(sql`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`));
    expect(waiting.n).toBe(0);
    release();
    await holding;
    await waitFor(() => passes >= 3, 10_000, 'passes once the lock is free');
  } finally {
    release?.();
    await watchers?.stop();
    await registry.close();
    await other.close();
    await mine.close();
  }
});

test('startWatchers runs a loop per configured network that hands matches to onMatch, and stops', async () => {
  const registry = createAdapterRegistry({ ethereum: { mode: 'regtest', rpcUrl: node.rpcUrl, contracts: node.tokens } }, seed);
  const seen: MatchedDeposit[] = [];
  const watchers = startWatchers({ networks: registry.networks(), adapter: (n) => registry.get(n), db, intervalMs: 100, onMatch: async (_n, m) => void seen.push(...m) });
  try {
    await (await customer.sendTransaction({ to: adapter.deriveAddressIn(1n), value: parseEther('0.05') })).wait();
    await waitFor(() => seen.length === 1, 30_000, 'the watcher to match the deposit');
    expect(seen[0].deposit.amount).toBe(parseEther('0.05'));
  } finally {
    await watchers.stop();
    await registry.close();
  }
});
