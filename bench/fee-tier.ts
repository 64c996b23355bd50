/**
 * A forward's fee tier against its callback host's volume: the read of the host's forwarded volume over
 * the last 30 days (rollingVolumeUsdt, twice per deposit: when it is judged and when it is forwarded),
 * timed on real PostgreSQL with 300 and with 100,000 of the host's payments in the window, and the ratio.
 * Each setting has its own database on the same server, filled the way the gateway fills it (the
 * payments' trigger keeps host_volume_hours).
 *
 *   npx tsx bench/fee-tier.ts                (DATABASE_URL: the server to use; else a throw-away cluster)
 *   npx tsx bench/fee-tier.ts --reads 200
 */
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { rollingVolumeUsdt } from '../activities/fee-inputs';
import { openPostgres, type Database } from '../src/db/client';
import { benchServer } from './lib/database';
import { stats } from './pipeline/report';
import { callbackValuesSeries } from '../test/helpers/callback-columns';

const { values: flags } = parseArgs({ options: { reads: { type: 'string', default: '100' } } });
const READS = Number(flags.reads);
const VOLUMES = [300, 3_000, 30_000, 100_000];
const HOST = 'big.example';

/** `n` payments of the host, done with a price, created at random moments of the last 29 days (10 per configuration). */
async function prepare(url: string, n: number): Promise<Database> {
  const database = await openPostgres(url, { max: 2 });
  const { db } = database;
  await db.execute(sql`INSERT INTO payment_configs (callback_url, callback_key, callback_host, ticker, family, address_in, address_out, derivation_index,
    notify_pending, notify_confirmations, post, json, convert, priority)
    SELECT ${callbackValuesSeries(`https://${HOST}/cb/`, sql`i`)}, 'eth', 'evm', '0x' || lpad(to_hex(i), 40, '0'), '0x' || lpad('1', 40, '0'), i,
      false, 12, 0, 0, 0, 'default' FROM generate_series(1, ${Math.ceil(n / 10)}::int) i`);
  await db.execute(sql`INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, vout, value_base, result, price, created_at)
    SELECT c.id, 'eth', 'ethereum', 'k' || c.derivation_index || ':' || j, 't' || c.derivation_index || ':' || j, j,
      1000000000000000000, 'done', '3000.5', now() - random() * interval '29 days'
    FROM payment_configs c, generate_series(1, 10) j`);
  await db.execute(sql`ANALYZE`);
  return database;
}

async function main(): Promise<void> {
  const server = await benchServer();
  const databases: Database[] = [];
  try {
    for (const n of VOLUMES) databases.push(await prepare(await server.database(), n));
    const times: number[][] = VOLUMES.map(() => []);
    const volumes: string[] = [];
    // The settings' reads interleaved, in rotating order; the first rounds warm the plans and caches.
    for (let round = -10; round < READS; round++) {
      for (let k = 0; k < VOLUMES.length; k++) {
        const i = (k + round + 10) % VOLUMES.length;
        const t0 = process.hrtime.bigint();
        volumes[i] = await rollingVolumeUsdt(databases[i].db, HOST);
        if (round >= 0) times[i].push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }
    console.log(`fee-tier read of the host's 30-day volume, ${READS} reads per setting (ms)`);
    VOLUMES.forEach((n, i) => {
      const s = stats(times[i])!;
      console.log(`${String(n).padStart(7)} payments: p50 ${s.p50.toFixed(2)}  p95 ${s.p95.toFixed(2)}  max ${s.max.toFixed(2)}  (volume ${volumes[i]})`);
    });
    const ratio = stats(times[VOLUMES.length - 1])!.p50 / stats(times[0])!.p50;
    console.log(`ratio p50 ${VOLUMES[VOLUMES.length - 1]} / ${VOLUMES[0]}: ${ratio.toFixed(2)}`);
  } finally {
    for (const d of databases) await d.close();
    await server.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
