import { eq } from 'drizzle-orm';
import { CHAIN_RESET_REASON, settleNewLocalChains } from '../../devnet/reset';
import { chainCursors, paymentConfigs, payments } from '../../src/db/schema';
import { createTestDatabase } from '../helpers/db';
import { callbackColumns } from '../helpers/callback-columns';

/**
 * What `npm start` does when a local chain comes back new (surfnet always; anvil when its state was
 * lost): it says so, and the payments waiting on the old chain are failed with that reason at once,
 * never read as reorged one by one; other networks and finished payments are untouched.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

it('fails the waiting payments of the new chain with a clear reason and restarts its watcher at the head', async () => {
  const db = database.db;
  const [sol] = await db
    .insert(paymentConfigs)
    .values({
      ...callbackColumns('https://shop.example/cb?order=r1'), ticker: 'sol', family: 'sol', addressIn: 'SoLAddressIn111', addressOut: 'SoLAddressOut111',
      derivationIndex: 1n, notifyPending: false, notifyConfirmations: 1, post: 0, json: 0, convert: 0, priority: 'default',
    })
    .returning();
  const [eth] = await db
    .insert(paymentConfigs)
    .values({
      ...callbackColumns('https://shop.example/cb?order=r2'), ticker: 'eth', family: 'evm', addressIn: '0xin', addressOut: '0xout',
      derivationIndex: 2n, notifyPending: false, notifyConfirmations: 3, post: 0, json: 0, convert: 0, priority: 'default',
    })
    .returning();
  const row = (config: typeof sol, network: string, key: string, result: string) => ({
    configId: config.id, ticker: config.ticker, network, depositKey: key, txidIn: key, valueBase: '1000', result,
  });
  await db.insert(payments).values([
    row(sol, 'solana', 'deposit:solana:a:0', 'pending'),
    row(sol, 'solana', 'deposit:solana:b:0', 'processing'),
    row(sol, 'solana', 'deposit:solana:c:0', 'done'),
    row(eth, 'ethereum', 'deposit:ethereum:d:0', 'pending'),
  ]);
  await db.insert(chainCursors).values([
    { network: 'solana', height: 5000n, blockHash: 'old' },
    { network: 'ethereum', height: 70n, blockHash: '0xabc' },
  ]);

  const lines = await settleNewLocalChains(db, ['solana']);
  expect(lines).toEqual(['local solana chain is new (the devnet kept no state of it across the restart): 2 payment(s) waiting on the old chain marked failed ("local chain reset")']);
  const all = await db.select().from(payments);
  const byKey = Object.fromEntries(all.map((p) => [p.depositKey, [p.result, p.reason]]));
  expect(byKey).toEqual({
    'deposit:solana:a:0': ['failed', CHAIN_RESET_REASON],
    'deposit:solana:b:0': ['failed', CHAIN_RESET_REASON],
    'deposit:solana:c:0': ['done', null],
    'deposit:ethereum:d:0': ['pending', null],
  });
  expect(await db.select().from(chainCursors).where(eq(chainCursors.network, 'solana'))).toEqual([]);
  expect((await db.select().from(chainCursors).where(eq(chainCursors.network, 'ethereum'))).map((c) => c.height)).toEqual([70n]);

  // A second start with nothing waiting says only that the chain is new.
  expect(await settleNewLocalChains(db, ['solana'])).toEqual(['local solana chain is new (the devnet kept no state of it across the restart)']);
});
