/**
 * Detection cost against the number of watched addresses (DESIGN 6): the per-block work of the
 * watcher — one indexed payment_configs query for all of a block's candidate recipients plus the
 * durable cursor write — timed with 10, 10 000 and 1 000 000 watched addresses on real PostgreSQL.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/detection.ts      (or npm run bench -- detection.ts)
 *
 * A throw-away database is created and dropped (on DATABASE_URL's server, else on a throw-away cluster).
 * The per-block cost against the number of deposits waiting for finality is bench/watcher.ts. Each block carries 200 payments (an Ethereum block's
 * order of magnitude), 10 of them to watched addresses.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { callbackValuesSeries } from '../test/helpers/callback-columns';
import { openPostgres } from '../src/db/client';
import type { ObservedDeposit, ScannedBlock } from '../src/chains/adapter';
import { matchBlock, writeCursor } from '../src/detection/watcher';
import { benchServer } from './lib/database';

const SIZES = [10, 10_000, 1_000_000];
const BLOCKS = 200;
const PAYMENTS_PER_BLOCK = 200;
const WATCHED_PER_BLOCK = 10;

const addressOf = (g: number) => '0x' + g.toString(16).padStart(40, '0');

function block(height: number, watched: number): ScannedBlock {
  const deposits: ObservedDeposit[] = [];
  for (let i = 0; i < PAYMENTS_PER_BLOCK; i++) {
    const recipient = i < WATCHED_PER_BLOCK ? addressOf(1 + Math.floor(Math.random() * watched)) : '0x' + randomBytes(20).toString('hex');
    deposits.push({
      network: 'ethereum', ticker: 'eth', txid: '0x' + randomBytes(32).toString('hex'), index: -1, recipient,
      amount: 10n ** 16n, blockNumber: BigInt(height), blockHash: '0x' + randomBytes(32).toString('hex'),
    });
  }
  return { height: BigInt(height), hash: deposits[0].blockHash, deposits };
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function main(): Promise<void> {
  const server = await benchServer();
  const database = await openPostgres(await server.database(), { max: 2 });
  const { db } = database;
  const medians: number[] = [];
  try {
    let have = 0;
    for (const n of SIZES) {
      const t0 = Date.now();
      await db.execute(sql`INSERT INTO payment_configs (callback_url, callback_key, callback_host, ticker, family, address_in, address_out, derivation_index,
        notify_pending, notify_confirmations, post, json, convert, priority)
        SELECT ${callbackValuesSeries('https://merchant.example/', sql`g`)}, 'eth', 'evm', '0x' || lpad(to_hex(g), 40, '0'), '0x' || lpad(to_hex(g), 40, '0'), g,
          false, 12, 0, 0, 0, 'default' FROM generate_series(${have + 1}::int, ${n}::int) g`);
      await db.execute(sql`ANALYZE payment_configs`);
      have = n;
      const load = Date.now() - t0;
      // Warm-up, then the measured blocks.
      for (let h = 0; h < 20; h++) await matchBlock(db, 'ethereum', block(h, n));
      const times: number[] = [];
      let matched = 0;
      for (let h = 0; h < BLOCKS; h++) {
        const b = block(h, n);
        const start = process.hrtime.bigint();
        matched += (await matchBlock(db, 'ethereum', b)).length;
        await writeCursor(db, 'ethereum', { height: b.height, hash: b.hash });
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      const plan = await db.execute(sql`EXPLAIN SELECT * FROM payment_configs WHERE family = 'evm' AND address_in IN ('0x00', '0x01')`);
      const usesIndex = JSON.stringify(plan).includes('payment_configs_family_address_in_idx');
      const med = quantile(times, 0.5);
      medians.push(med);
      console.log(
        `${n.toLocaleString('en-US').padStart(9)} watched: per block median ${med.toFixed(2)} ms, p95 ${quantile(times, 0.95).toFixed(2)} ms ` +
          `(${BLOCKS} blocks × ${PAYMENTS_PER_BLOCK} payments, ${matched} matches, plan: ${usesIndex ? '(family, address_in) index' : 'seq scan, the planner’s choice for a tiny table'}; load ${load} ms)`,
      );
    }
    console.log(`ratio largest/smallest (median per block): ${(medians[medians.length - 1] / medians[0]).toFixed(2)}`);
  } finally {
    await database.close();
    await server.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
