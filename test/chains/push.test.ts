/**
 * The watcher's push (src/detection/push.ts) on a live anvil and the real PostgreSQL: a deposit is told once
 * when a block makes it due, a forward once when a block holds it or another transaction took its place,
 * the deposits above a reorganised height are told to look again, and the queries per pass do not grow
 * with the deposits waiting.
 */
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Pool } from 'pg';
import { JsonRpcProvider, Network, Transaction, Wallet, parseEther } from 'ethers';
import type { Db } from '../../src/db/client';
import * as schema from '../../src/db/schema';
import { forwardTxs, paymentConfigs } from '../../src/db/schema';
import { recordDeposit, updatePayment } from '../../src/db/queries/payments';
import { EvmAdapter } from '../../src/chains/evm/adapter';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { jsonRpc } from '../../src/chains/json-rpc';
import { pushHints, type ChainHint } from '../../src/detection/push';
import { scanOnce } from '../../src/detection/watcher';
import { dueHeight } from '../../src/domain/finality';
import { createTestDatabase } from '../helpers/db';
import { testSeed, tmpDir } from '../helpers/nodes';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(120_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let node: AnvilDevnet;
let pool: Pool;
let db: Db;
let adapter: EvmAdapter;
let provider: JsonRpcProvider;
let configId: string;
const queries: string[] = [];
const hints: Array<[string, ChainHint]> = [];
const mine = (n: number) => jsonRpc(node.rpcUrl, 'anvil_mine', [`0x${n.toString(16)}`]);
const pass = () => scanOnce(adapter, db, 'ethereum', { onBatch: (before, batch) => pushHints(db, 'ethereum', before, batch, async (id, h) => void hints.push([id, h])).then(() => undefined) });
const paymentQueries = () => queries.filter((q) => /from "(payments|forward_txs)"/i.test(q)).length;

async function deposit(key: string, block: bigint, required = 3) {
  const { row } = await recordDeposit(db, {
    configId, ticker: 'eth', network: 'ethereum', depositKey: key, txidIn: key, vout: null, blockNumber: block, blockHash: '0x00',
    valueBase: 1n, dueHeight: dueHeight('ethereum', block, required),
  });
  return row;
}

beforeAll(async () => {
  database = await createTestDatabase();
  node = await startAnvil({ dir: tmpDir('gw-push-') });
  pool = new Pool({ connectionString: database.url, max: 2 });
  db = drizzle(pool, { schema, logger: { logQuery: (q) => void queries.push(q) } }) as unknown as Db;
  adapter = new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: node.rpcUrl, chainId: node.chainId, seed: testSeed(), tokens: node.tokens });
  provider = new JsonRpcProvider(node.rpcUrl, Network.from(node.chainId), { staticNetwork: true, cacheTimeout: -1 });
  const [config] = await db
    .insert(paymentConfigs)
    .values({
      ...callbackColumns('https://shop.example/cb'), ticker: 'eth', family: 'evm', addressIn: adapter.deriveAddressIn(1n), addressOut: Wallet.createRandom().address,
      derivationIndex: 1n, notifyPending: false, notifyConfirmations: 3, post: 0, json: 0, convert: 0, priority: 'default',
    })
    .returning();
  configId = config.id;
  await pass(); // the cursor starts at the head
});

afterAll(async () => {
  provider?.destroy();
  await adapter?.close();
  await pool?.end();
  await database?.drop();
  await node?.stop();
});

test('a deposit is told once, by the pass whose blocks reach its due height', async () => {
  const head = BigInt(await provider.getBlockNumber());
  await deposit('deposit:ethereum:a:0', head + 1n); // due at head + 3
  await mine(2);
  hints.length = 0;
  await pass();
  expect(hints).toEqual([]);
  await mine(1);
  await pass();
  expect(hints).toEqual([['deposit:ethereum:a:0', { kind: 'due', height: String(head + 3n) }]]);
  await mine(3);
  await pass();
  expect(hints).toHaveLength(1);
});

/** A transfer sent from the customer's key and stored as the forward of a processing payment (not mined yet). */
async function storedForward(uuid: string) {
  const tx = await new Wallet(node.customerKey, provider).sendTransaction({ to: Wallet.createRandom().address, value: parseEther('0.01') });
  await updatePayment(db, uuid, { result: 'processing', txidOut: tx.hash });
  return tx;
}

test('the block holding a stored forward tells its payment', async () => {
  const row = await deposit('deposit:ethereum:b:0', 1n);
  const tx = await storedForward(row.uuid);
  await tx.wait();
  hints.length = 0;
  await pass();
  expect(hints).toEqual([['deposit:ethereum:b:0', { kind: 'forward', height: expect.any(String) }]]);
});

test('a forward its activity still watches for is not told; one whose window has passed is', async () => {
  const watched = await deposit('deposit:ethereum:w:0', 1n);
  const past = await deposit('deposit:ethereum:p:0', 1n);
  const a = await storedForward(watched.uuid);
  const b = await storedForward(past.uuid);
  // forward_watch_until as storeForwardOnce writes it (the database's clock): one window open, one passed.
  await db.execute(sql`UPDATE payments SET forward_watch_until = now() + interval '1 minute' WHERE uuid = ${watched.uuid}`);
  await db.execute(sql`UPDATE payments SET forward_watch_until = now() - interval '1 second' WHERE uuid = ${past.uuid}`);
  await a.wait();
  await b.wait();
  hints.length = 0;
  await pass();
  expect(hints).toEqual([['deposit:ethereum:p:0', { kind: 'forward', height: expect.any(String) }]]);
});

test('a block where another transaction took the nonce of a stored forward tells its payment: dropped', async () => {
  const customer = new Wallet(node.customerKey, provider);
  const source = Wallet.createRandom().connect(provider);
  await (await customer.sendTransaction({ to: source.address, value: parseEther('0.1') })).wait();
  const gone = await deposit('deposit:ethereum:d:0', 1n);
  const later = await deposit('deposit:ethereum:l:0', 1n);
  const fee = await provider.getFeeData();
  const sign = (nonce: number) =>
    source.signTransaction({
      type: 2, chainId: node.chainId, nonce, to: Wallet.createRandom().address, value: 1n, gasLimit: 21_000n,
      maxFeePerGas: fee.maxFeePerGas, maxPriorityFeePerGas: fee.maxPriorityFeePerGas,
    });
  // Two stored forwards of the source, never broadcast: nonce 0, and nonce 1, which nothing takes here.
  for (const [row, nonce] of [[gone, 0], [later, 1]] as const) {
    const txid = Transaction.from(await sign(nonce)).hash!;
    await db.insert(forwardTxs).values({ txid, paymentUuid: row.uuid, network: 'ethereum', source: source.address, nonce: BigInt(nonce) });
    await updatePayment(db, row.uuid, { result: 'processing', txidOut: txid });
  }
  const rival = await source.sendTransaction({ to: Wallet.createRandom().address, value: 2n, nonce: 0 });
  await rival.wait();
  hints.length = 0;
  await pass();
  expect(hints).toEqual([['deposit:ethereum:d:0', { kind: 'dropped', height: expect.any(String) }]]);
});

test('a UTXO block that spends a deposit output in another transaction than its stored forward tells the payment: dropped; the forward itself: included', async () => {
  const row = async (key: string, txidOut: string) => {
    const { row: r } = await recordDeposit(db, {
      configId, ticker: 'ltc', network: 'litecoin', depositKey: key, txidIn: key.split(':')[2], vout: 1, blockNumber: 5n, blockHash: '00', valueBase: 1n, dueHeight: 6n,
    });
    await updatePayment(db, r.uuid, { result: 'processing', txidOut });
  };
  await row('deposit:litecoin:aa:1', 'f-aa');
  await row('deposit:litecoin:bb:1', 'f-bb');
  const got: Array<[string, ChainHint]> = [];
  const block = { height: 10n, hash: '10', deposits: [], txids: ['rival', 'f-bb'], outpoints: [{ txid: 'aa', vout: 1 }, { txid: 'bb', vout: 1 }, { txid: 'cc', vout: 0 }] };
  await pushHints(db, 'litecoin', 9n, { blocks: [block], cursor: { height: 10n, hash: '10' }, rewound: false }, async (id, h) => void got.push([id, h]));
  expect(got.sort()).toEqual([
    ['deposit:litecoin:aa:1', { kind: 'dropped', height: '10' }],
    ['deposit:litecoin:bb:1', { kind: 'forward', height: '10' }],
  ]);
});

test('a reorganised chain tells the deposits above the fork to look again', async () => {
  await pass();
  const head = BigInt(await provider.getBlockNumber());
  await deposit('deposit:ethereum:c:0', head, 12);
  const snap = await jsonRpc<string>(node.rpcUrl, 'evm_snapshot');
  await mine(1);
  await pass();
  await jsonRpc(node.rpcUrl, 'evm_revert', [snap]);
  await mine(3); // a different, longer chain from the fork
  hints.length = 0;
  await pass();
  expect(hints).toContainEqual(['deposit:ethereum:c:0', { kind: 'recheck', height: expect.any(String) }]);
});

test('the queries of a pass do not grow with the deposits waiting: 10 or 10,000', async () => {
  const head = BigInt(await provider.getBlockNumber());
  const customer = new Wallet(node.customerKey, provider);
  const countFor = async () => {
    // A block with a transaction: the included and dropped lookups run too.
    await (await customer.sendTransaction({ to: Wallet.createRandom().address, value: 1n })).wait();
    queries.length = 0;
    await pass();
    return paymentQueries();
  };
  const few = await countFor();
  await db.execute(sql`INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, block_number, block_hash, value_base, result, due_height)
    SELECT ${configId}, 'eth', 'ethereum', 'deposit:ethereum:w' || g || ':0', 'w' || g, ${head}, '0x00', '1', 'pending', ${head + 1000n} FROM generate_series(1, 10000) g`);
  expect(await countFor()).toBe(few);
  // due, included, dropped (EVM); recheck only after a reorg, the UTXO lookup only on UTXO chains.
  expect(few).toBe(3);
});
