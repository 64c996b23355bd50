/**
 * The watcher's per-block work against the number of deposits waiting for finality (issue 11): match
 * the block's recipients (matchBlock), move the durable cursor (writeCursor) and push the hints
 * (pushHints, with a no-op signal), timed per block on real PostgreSQL with 10 and with 10,000 deposits
 * waiting (payments 'pending' with due_height set, the partial index payments_due_idx), side by side:
 * one database per setting on the same server, the settings' blocks interleaved in rotating order.
 *
 *   npx tsx bench/watcher.ts                 (DATABASE_URL: the server to use; else a throw-away cluster)
 *   npx tsx bench/watcher.ts --blocks 500
 *
 * Steady state in each setting: every block brings `due` deposits to their due height (they leave
 * 'pending' for 'processing' with a txid_out, as the workflow moves them) and `due` new ones arrive
 * `window` blocks from finality, so that `due × window` wait at every block. The compared settings have
 * the same number due per block and differ only in how many wait; a third one (10,000 waiting on a
 * 12-block window: 833 due per block) shows the cost of the signals' own rows, for information.
 * Each block carries 200 payments (10 to watched addresses) and their 200 txids; 10,000 watched addresses.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { callbackValuesSeries } from '../test/helpers/callback-columns';
import type { ObservedDeposit, ScannedBlock } from '../src/chains/adapter';
import { pushHints } from '../src/detection/push';
import { matchBlock, writeCursor } from '../src/detection/watcher';
import { openPostgres, type Database } from '../src/db/client';
import { benchServer } from './lib/database';
import { stats } from './pipeline/report';

const { values: flags } = parseArgs({ options: { blocks: { type: 'string', default: '200' }, warmup: { type: 'string', default: '20' } } });
const BLOCKS = Number(flags.blocks);
const WARMUP = Number(flags.warmup);
const WATCHED = 10_000;
const PAYMENTS_PER_BLOCK = 200;
const WATCHED_PER_BLOCK = 10;
const START = 1_000;

interface Setting {
  name: string;
  due: number;
  window: number;
  compared: boolean;
}
const SETTINGS: Setting[] = [
  { name: '10 waiting', due: 10, window: 1, compared: true },
  { name: '10,000 waiting', due: 10, window: 1_000, compared: true },
  { name: '10,000 waiting, 12-block window', due: 833, window: 12, compared: false },
];

const addressOf = (g: number) => '0x' + g.toString(16).padStart(40, '0');
const hex = (bytes: number) => '0x' + randomBytes(bytes).toString('hex');

function block(height: number): ScannedBlock {
  const deposits: ObservedDeposit[] = [];
  const hash = hex(32);
  for (let i = 0; i < PAYMENTS_PER_BLOCK; i++) {
    const recipient = i < WATCHED_PER_BLOCK ? addressOf(1 + Math.floor(Math.random() * WATCHED)) : hex(20);
    deposits.push({ network: 'ethereum', ticker: 'eth', txid: hex(32), index: -1, recipient, amount: 10n ** 16n, blockNumber: BigInt(height), blockHash: hash });
  }
  return { height: BigInt(height), hash, deposits, txids: deposits.map((d) => d.txid) };
}

/** `count` deposits per height in [from, to], waiting ('pending') with their due height set. */
async function arrive(db: Database['db'], from: number, to: number, count: number): Promise<void> {
  await db.execute(sql`INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, block_number, block_hash, due_height, value_base, result)
    SELECT (SELECT id FROM payment_configs LIMIT 1), 'eth', 'ethereum', 'deposit:ethereum:' || md5(random()::text || h || ':' || k) || ':-1',
      md5(h || ':' || k || random()::text), h - 11, md5(h::text), h, '10000000000000000', 'pending'
    FROM generate_series(${from}::int, ${to}::int) h, generate_series(1, ${count}::int) k`);
}

async function prepare(url: string, s: Setting): Promise<Database> {
  const database = await openPostgres(url, { max: 2 });
  const { db } = database;
  await db.execute(sql`INSERT INTO payment_configs (callback_url, callback_key, callback_host, ticker, family, address_in, address_out, derivation_index,
    notify_pending, notify_confirmations, post, json, convert, priority)
    SELECT ${callbackValuesSeries('https://merchant.example/', sql`g`)}, 'eth', 'evm', '0x' || lpad(to_hex(g), 40, '0'), '0x' || lpad(to_hex(g), 40, '0'), g,
      false, 12, 0, 0, 0, 'default' FROM generate_series(1, ${WATCHED}::int) g`);
  await arrive(db, START + 1, START + s.window, s.due);
  await writeCursor(db, 'ethereum', { height: BigInt(START), hash: hex(32) });
  await db.execute(sql`ANALYZE payment_configs`);
  await db.execute(sql`ANALYZE payments`);
  return database;
}

interface Timing {
  total: number;
  match: number;
  cursor: number;
  push: number;
  signals: number;
}

/** One block of the watcher's work, timed; then (untimed) the steady state is restored. */
async function step(db: Database['db'], s: Setting, height: number): Promise<Timing> {
  const b = block(height);
  let signals = 0;
  const t0 = process.hrtime.bigint();
  await matchBlock(db, 'ethereum', b, b.height);
  const t1 = process.hrtime.bigint();
  await writeCursor(db, 'ethereum', { height: b.height, hash: b.hash });
  const t2 = process.hrtime.bigint();
  await pushHints(db, 'ethereum', b.height - 1n, { blocks: [b], cursor: { height: b.height, hash: b.hash }, rewound: false }, async () => {
    signals++;
  });
  const t3 = process.hrtime.bigint();
  const ms = (a: bigint, z: bigint) => Number(z - a) / 1e6;
  // The workflows of the deposits now due reach finality and forward; new deposits arrive.
  await db.execute(sql`UPDATE payments SET result = 'processing', txid_out = 'fwd-' || deposit_key
    WHERE network = 'ethereum' AND result = 'pending' AND due_height = ${height}`);
  await arrive(db, height + s.window, height + s.window, s.due);
  return { total: ms(t0, t3), match: ms(t0, t1), cursor: ms(t1, t2), push: ms(t2, t3), signals };
}

async function main(): Promise<void> {
  const server = await benchServer();
  const databases: Database[] = [];
  try {
    for (const s of SETTINGS) databases.push(await prepare(await server.database(), s));
    const times: Timing[][] = SETTINGS.map(() => []);
    for (let i = 0; i < WARMUP + BLOCKS; i++) {
      const height = START + 1 + i;
      // Rotating order: no setting always runs first (cold caches) or last.
      for (let k = 0; k < SETTINGS.length; k++) {
        const j = (i + k) % SETTINGS.length;
        const t = await step(databases[j].db, SETTINGS[j], height);
        if (i >= WARMUP) times[j].push(t);
      }
    }
    const med = (xs: number[]) => stats(xs)!.p50;
    const medians = times.map((ts) => med(ts.map((t) => t.total)));
    for (const [j, s] of SETTINGS.entries()) {
      const ts = times[j];
      const total = stats(ts.map((t) => t.total))!;
      console.log(
        `${s.name.padEnd(32)} per block median ${total.p50.toFixed(2)} ms, p95 ${total.p95.toFixed(2)} ms ` +
          `(match ${med(ts.map((t) => t.match)).toFixed(2)}, cursor ${med(ts.map((t) => t.cursor)).toFixed(2)}, push ${med(ts.map((t) => t.push)).toFixed(2)}; ` +
          `${s.due} due and ${ts[0].signals} signals per block, ${s.due * s.window} waiting)`,
      );
    }
    // The due query as pushHints sends it (parameters bound per execution, so the partial index's predicate applies).
    for (const [j, s] of SETTINGS.entries()) {
      const plan = await databases[j].db.execute(sql`EXPLAIN SELECT deposit_key FROM payments
        WHERE network = ${'ethereum'} AND result = ${'pending'} AND due_height > ${START + BLOCKS} AND due_height <= ${START + BLOCKS + 1}`);
      const text = JSON.stringify(plan);
      console.log(`  ${s.name}: due query plan ${text.includes('payments_due_idx') ? 'uses payments_due_idx' : `does NOT use payments_due_idx: ${text.slice(0, 300)}`}`);
    }
    const ratio = medians[1] / medians[0];
    console.log(`ratio 10,000 waiting / 10 waiting (median per block, same deposits due per block): ${ratio.toFixed(2)} (target ≤ 1.5: ${ratio <= 1.5 ? 'met' : 'NOT met'})`);
    console.log(`for information, 833 due per block / 10 waiting: ${(medians[2] / medians[0]).toFixed(2)} (the due deposits' own rows and signals)`);
    console.log(`${BLOCKS} blocks per setting after ${WARMUP} warm-up blocks, ${PAYMENTS_PER_BLOCK} payments and txids per block, ${WATCHED.toLocaleString('en-US')} watched addresses`);
  } finally {
    for (const d of databases) await d.close();
    await server.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
