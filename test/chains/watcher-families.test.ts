/**
 * scanOnce on every family's live node and the real PostgreSQL: a payment to a configured address_in
 * is matched exactly once, with at most one payment_configs query per block read; with no cursor stored,
 * a payment made before the first pass to an address created before it is read too (src/detection/first-start.ts).
 */
import { randomInt } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Pool } from 'pg';
import { NETWORKS } from '../../src/domain/assets';
import type { Db } from '../../src/db/client';
import * as schema from '../../src/db/schema';
import { chainCursors, paymentConfigs } from '../../src/db/schema';
import { readCursor, scanOnce, type MatchedDeposit } from '../../src/detection/watcher';
import { createTestDatabase } from '../helpers/db';
import { requiredLitecoinChain, surfnetChain, testSeed, type LiveChain } from '../helpers/nodes';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(120_000);

const factories: [string, () => Promise<LiveChain>][] = [
  ['surfnet sol', () => surfnetChain('sol', testSeed())],
  ['surfnet spl', () => surfnetChain('sol_usdc', testSeed())],
];
factories.push(['litecoind ltc', () => requiredLitecoinChain(testSeed())]);

describe.each(factories)('%s', (name, start) => {
  let chain: LiveChain;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: Pool;
  let db: Db;
  const queries: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new Pool({ connectionString: database.url, max: 2 });
    db = drizzle(pool, { schema, logger: { logQuery: (q) => void queries.push(q) } }) as unknown as Db;
    chain = await start();
  });
  afterAll(async () => {
    await chain?.stop();
    await pool?.end();
    await database?.drop();
  });

  test('a payment to a configured address_in is matched once, one query per block at most', async () => {
    const network = chain.adapter.network;
    const index = BigInt(randomInt(0, 2 ** 31 - 1));
    const addressIn = chain.adapter.deriveAddressIn(index);
    await db.insert(paymentConfigs).values({
      ...callbackColumns(`https://shop.example/${network}/${index}`), ticker: chain.ticker, family: NETWORKS[network].addressFamily,
      addressIn, addressOut: await chain.freshAddressOut(), derivationIndex: index, notifyPending: false, notifyConfirmations: 1,
      post: 0, json: 0, convert: 0, priority: 'default',
    });
    expect(await scanOnce(chain.adapter, db, network)).toEqual([]);
    const from = (await readCursor(db, network))!;
    const txid = await chain.pay(addressIn, chain.amount);
    await chain.mine(1);
    queries.length = 0;
    const matched: MatchedDeposit[] = [];
    const deadline = Date.now() + 30_000;
    while (matched.length === 0 && Date.now() < deadline) matched.push(...(await scanOnce(chain.adapter, db, network, { maxBlocks: 500 })));
    expect(matched.map((m) => [m.deposit.txid, m.deposit.amount, m.config.addressIn])).toEqual([[txid, chain.amount, addressIn]]);
    const read = Number((await readCursor(db, network))!.height - from.height);
    expect(queries.filter((q) => /from "payment_configs"/i.test(q)).length).toBeLessThanOrEqual(read);
    await chain.mine(2);
    expect(await scanOnce(chain.adapter, db, network, { maxBlocks: 500 })).toEqual([]);
  });

  test('with no cursor stored, the first pass reads from before the first configuration: a deposit paid before it is matched', async () => {
    const network = chain.adapter.network;
    const index = BigInt(randomInt(0, 2 ** 31 - 1));
    const addressIn = chain.adapter.deriveAddressIn(index);
    await db.insert(paymentConfigs).values({
      ...callbackColumns(`https://shop.example/${network}/first-start/${index}`), ticker: chain.ticker, family: NETWORKS[network].addressFamily,
      addressIn, addressOut: await chain.freshAddressOut(), derivationIndex: index, notifyPending: false, notifyConfirmations: 1,
      post: 0, json: 0, convert: 0, priority: 'default',
    });
    const txid = await chain.pay(addressIn, chain.amount);
    await chain.mine(3);
    // The worker's first start: the cursor the test above stored goes.
    await db.delete(chainCursors).where(eq(chainCursors.network, network));
    const head = await chain.adapter.head();
    const matched: MatchedDeposit[] = [];
    for (let pass = 0; ((await readCursor(db, network))?.height ?? -1n) < head.height && pass < 100; pass++) {
      matched.push(...(await scanOnce(chain.adapter, db, network, { maxBlocks: 500 })));
    }
    expect(matched.filter((m) => m.config.addressIn === addressIn).map((m) => [m.deposit.txid, m.deposit.amount])).toEqual([[txid, chain.amount]]);
  });

  // UTXO chains only (the test is not made for the others): their watchers poll a node that has no head feed.
  (name.startsWith('litecoind') ? test : () => undefined)('a UTXO pass with nothing new asks the node for its best block only; a new block is read as before', async () => {
    const rpc = (chain.adapter as unknown as { rpc: { call(method: string, params?: unknown[]): Promise<unknown> } }).rpc;
    const head = await chain.adapter.head();
    const calls = jest.spyOn(rpc, 'call');
    try {
      const idle = await chain.adapter.scan(head, 5);
      expect(idle).toEqual({ blocks: [], cursor: head, rewound: false });
      expect(calls.mock.calls.map(([method]) => method)).toEqual(['getbestblockhash']);
      await chain.mine(1);
      const next = await chain.adapter.scan(head, 5);
      expect(next.rewound).toBe(false);
      expect(next.blocks.map((b) => b.height)).toEqual([head.height + 1n]);
      expect(next.cursor).toEqual({ height: head.height + 1n, hash: next.blocks[0].hash });
    } finally {
      calls.mockRestore();
    }
  });

  test('a cursor above the head (a reset local chain, or a shorter fork) rewinds instead of waiting', async () => {
    const batch = await chain.adapter.scan({ height: 10n ** 9n, hash: 'gone' }, 5);
    expect(batch.rewound).toBe(true);
    expect(batch.cursor.height).toBeLessThan(10n ** 9n);
  });
});
