/**
 * The watcher's in-memory list of watched addresses (src/detection/watched-addresses.ts) on a real
 * PostgreSQL and a live surfnet: a configuration stored after the watcher started is matched in the next
 * block, one whose create committed after a refresh that began while it ran is read by the next refresh, and
 * a watcher started afresh (a restart) finds what was created and paid while none ran.
 */
import { Client } from 'pg';
import { Keypair, PublicKey, SystemProgram } from '@solana/web3.js';
import { NETWORKS } from '../../src/domain/assets';
import { startSurfnet, sendAndPoll, type SurfnetDevnet } from '../../devnet/surfnet';
import { SolAdapter } from '../../src/chains/sol/adapter';
import { openPostgres, type Db } from '../../src/db/client';
import { paymentConfigs } from '../../src/db/schema';
import { readCursor, scanOnce, type MatchedDeposit } from '../../src/detection/watcher';
import { WatchedAddresses } from '../../src/detection/watched-addresses';
import { createTestDatabase } from '../helpers/db';
import { testSeed } from '../helpers/nodes';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(180_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let dev: SurfnetDevnet | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await dev?.stop();
  await database?.drop();
});

let made = 0;
const address = () => Keypair.generate().publicKey.toBase58();

async function watch(db: Db, addressIn: string): Promise<void> {
  made++;
  await db.insert(paymentConfigs).values({
    ...callbackColumns(`https://shop.example/refresh/${made}`), ticker: 'sol', family: NETWORKS.solana.addressFamily, addressIn,
    addressOut: address(), derivationIndex: BigInt(1000 + made), notifyPending: false, notifyConfirmations: 1,
    post: 0, json: 0, convert: 0, priority: 'default',
  });
}

test('a refresh reads what was created since the last one, a create that committed after a refresh began included', async () => {
  const list = new WatchedAddresses(database.db, 'sol');
  expect(await list.current()).toEqual([]);
  const a = address();
  await watch(database.db, a);
  expect(await list.current()).toEqual([a]);

  // A create whose transaction began before the next refresh and commits after it: its row's created_at is
  // older than that refresh's now(), and the refresh cannot see it yet.
  const slow = new Client({ connectionString: database.url });
  await slow.connect();
  const b = address();
  const cb = callbackColumns('https://shop.example/refresh/slow');
  try {
    await slow.query('BEGIN');
    await slow.query(
      `INSERT INTO payment_configs (callback_url, callback_key, callback_host, ticker, family, address_in, address_out, derivation_index, notify_pending, notify_confirmations, post, json, convert, priority)
       VALUES ($1, $2, $3, 'sol', 'sol', $4, $5, 999, false, 1, 0, 0, 0, 'default')`,
      [cb.callbackUrl, cb.callbackKey, cb.callbackHost, b, address()],
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(await list.current()).toEqual([a]);
    await slow.query('COMMIT');
  } finally {
    await slow.end();
  }
  expect(await list.current()).toEqual([a, b]);
  // Only new rows are added; another family's are not read.
  await database.db.insert(paymentConfigs).values({
    ...callbackColumns('https://shop.example/refresh/evm'), ticker: 'eth', family: 'evm', addressIn: '0x' + '1'.repeat(40), addressOut: '0x' + '2'.repeat(40),
    derivationIndex: 1n, notifyPending: false, notifyConfirmations: 1, post: 0, json: 0, convert: 0, priority: 'default',
  });
  expect(await list.current()).toEqual([a, b]);
  // A list made afresh (a process started again) holds every one at once.
  expect(new Set(await new WatchedAddresses(database.db, 'sol').current())).toEqual(new Set([a, b]));
});

test('an address created after the watcher started is matched in its next block; a restarted watcher finds what was created and paid while none ran', async () => {
  dev = await startSurfnet({ slotTimeMs: 100 });
  const customer = Keypair.fromSecretKey(Uint8Array.from(dev.customerSecret));
  const pay = (to: string, lamports: bigint) =>
    sendAndPoll(dev!.connection, [SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: new PublicKey(to), lamports })], [customer]);
  const follow = async (adapter: SolAdapter, db: Db, until: string): Promise<MatchedDeposit[]> => {
    const { slot } = (await dev!.connection.getSignatureStatuses([until], { searchTransactionHistory: true })).value[0]!;
    const matched: MatchedDeposit[] = [];
    for (let pass = 0; (await readCursor(db, 'solana'))!.height < BigInt(slot) && pass < 100; pass++) matched.push(...(await scanOnce(adapter, db, 'solana', { maxBlocks: 100 })));
    return matched;
  };
  const seen = (ms: MatchedDeposit[]) => ms.map((m) => [m.deposit.txid, m.deposit.recipient, m.deposit.amount]);

  // The watcher runs (its list loaded, its cursor stored), then a configuration is made and paid.
  const adapter = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: dev.rpcUrl, seed: testSeed(), tokens: dev.tokens });
  await scanOnce(adapter, database.db, 'solana');
  await scanOnce(adapter, database.db, 'solana');
  const fresh = address();
  await watch(database.db, fresh);
  const paid = await pay(fresh, 1_500_000_000n);
  expect(seen(await follow(adapter, database.db, paid))).toEqual([[paid, fresh, 1_500_000_000n]]);

  // No watcher runs while another configuration is made and paid; one started afresh (its own connection, so
  // its own list) reads on from the stored cursor.
  const meanwhile = address();
  await watch(database.db, meanwhile);
  const paidMeanwhile = await pay(meanwhile, 2_500_000_000n);
  const again = await openPostgres(database.url, { migrate: false });
  const restarted = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: dev.rpcUrl, seed: testSeed(), tokens: dev.tokens });
  try {
    expect(seen(await follow(restarted, again.db, paidMeanwhile))).toEqual([[paidMeanwhile, meanwhile, 2_500_000_000n]]);
  } finally {
    await Promise.all([adapter.close(), restarted.close()]);
    await again.close();
  }
});
