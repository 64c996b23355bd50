import { randomInt } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Client } from 'pg';
import type { Db } from '../../src/db/client';
import { rowsOf } from '../../src/db/prepared';
import { forwardedValueOfHost } from '../../src/db/queries/host-volume';
import { storeSnapshotOnce } from '../../src/db/queries/payments';
import { createTestDatabase } from '../helpers/db';
import { callbackValues } from '../helpers/callback-columns';

/**
 * host_volume_hours, the fee tier's per-hour sums (drizzle/0000_init.sql, striped), on
 * real PostgreSQL (and PGlite for the migrations): whatever statements move the payments, the tier reads what
 * summing the payments themselves gives, for any start of its window; concurrent forwards of one host all
 * count, and sessions on different stripes do not wait for each other; earlier hours fold into one row; an
 * existing database is filled in by the migrations.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

/** The read before host_volume_hours: every payment of the host since `since`, summed. */
async function summedFromPayments(db: Db, host: string, since: Date): Promise<Record<string, string>> {
  const rows = rowsOf<{ ticker: string; v: string }>(
    await db.execute(sql`
      SELECT p.ticker, sum(p.value_base * (CASE WHEN p.price ~ '^[0-9]+([.][0-9]+)?$' THEN p.price::numeric END))::text AS v
      FROM payments p JOIN payment_configs c ON c.id = p.config_id
      WHERE p.result IN ('sent', 'done') AND p.created_at >= ${since.toISOString()}::timestamptz AND p.price IS NOT NULL
        AND c.callback_host = ${host}
      GROUP BY p.ticker`),
  );
  return Object.fromEntries(rows.filter((r) => r.v !== null && Number(r.v) !== 0).map((r) => [r.ticker, r.v]));
}

async function read(db: Db, host: string, since: Date): Promise<Record<string, string>> {
  const rows = await forwardedValueOfHost(db, host, since);
  return Object.fromEntries(rows.filter((r) => Number(r.valueTimesPrice) !== 0).map((r) => [r.ticker, r.valueTimesPrice]));
}

/** Numeric text compared as numbers (the two sums may differ in trailing zeros only). */
const same = (a: Record<string, string>) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, Number(v).toPrecision(30)]));

/** Configurations as the create path writes them: callback_key and callback_host from the URL (callbackValues). */
async function configs(db: Db, urls: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const u of urls) {
    const [row] = rowsOf<{ id: string }>(
      await db.execute(sql`
        INSERT INTO payment_configs (callback_url, callback_key, callback_host, ticker, family, address_in, address_out, derivation_index, notify_pending, notify_confirmations, post, json, convert, priority)
        VALUES (${callbackValues(u)}, 'eth', 'evm', '0x' || md5(${u}), '0x00000000000000000000000000000000000000b2', 0, false, 12, 0, 0, 0, 'default')
        RETURNING id`),
    );
    ids.push(row.id);
  }
  return ids;
}

const RESULTS = ['pending', 'processing', 'sent', 'done', 'failed'];
const PRICES = ['3012.45', '1', '0.000123', null, 'n/a', '2999.99'];
const pick = <T,>(xs: T[]): T => xs[randomInt(xs.length)];

it('whatever the statements that move payments, the tier reads what summing the payments gives, for any start of its window', async () => {
  const db = database.db;
  const ids = await configs(db, ['https://a.example/1', 'https://USER:pw@A.example:8443/2', 'https://b.example/3']);
  const minutesAgo = () => randomInt(0, 35 * 24 * 60);
  for (let i = 0; i < 400; i++) {
    await db.execute(sql`
      INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, value_base, result, price, created_at)
      VALUES (${pick(ids)}, ${pick(['eth', 'erc20_usdt'])}, 'ethereum', ${`k${i}`}, ${`t${i}`}, ${BigInt(randomInt(1, 2 ** 40)) * 10n ** 9n},
        ${pick(RESULTS)}, ${pick(PRICES)}, now() - make_interval(mins => ${minutesAgo()}))`);
  }
  // Moves as the gateway makes them, and as an operator's statement might.
  for (let i = 0; i < 300; i++) {
    const key = `k${randomInt(400)}`;
    const move = randomInt(6);
    if (move === 0) await db.execute(sql`UPDATE payments SET result = ${pick(RESULTS)} WHERE deposit_key = ${key}`);
    if (move === 1) await db.execute(sql`UPDATE payments SET price = ${pick(PRICES)} WHERE deposit_key = ${key}`);
    if (move === 2) await db.execute(sql`UPDATE payments SET created_at = now() - make_interval(mins => ${minutesAgo()}) WHERE deposit_key = ${key}`);
    if (move === 3) await db.execute(sql`UPDATE payments SET config_id = ${pick(ids)}, ticker = ${pick(['eth', 'erc20_usdt'])} WHERE deposit_key = ${key}`);
    if (move === 4) await db.execute(sql`UPDATE payments SET confirmations = confirmations + 1 WHERE deposit_key = ${key}`);
    if (move === 5) await db.execute(sql`DELETE FROM payments WHERE deposit_key = ${key}`);
  }
  const now = Date.now();
  // Any start the tier may ask for: at most 31 days back (older hours are dropped).
  for (const host of ['a.example', 'b.example', 'c.example']) {
    for (const since of [new Date(now - 30 * 24 * 3600_000), new Date(now - randomInt(0, 31 * 24 * 3600_000)), new Date(now - 3600_000), new Date(now + 60_000)]) {
      expect([host, since, same(await read(db, host, since))]).toEqual([host, since, same(await summedFromPayments(db, host, since))]);
    }
  }
  expect(Object.keys(await read(db, 'a.example', new Date(now - 30 * 24 * 3600_000))).length).toBeGreaterThan(0);
  // A window older than the hours kept is refused, not summed short.
  await expect(forwardedValueOfHost(db, 'a.example', new Date(now - 32 * 24 * 3600_000))).rejects.toThrow(RangeError);
});

it('the window starts at its instant: in the hour it starts in, only the payments from that instant on count', async () => {
  const db = database.db;
  const [id] = await configs(db, ['https://edge.example/cb']);
  // A start at hh:30 UTC, ten days ago.
  const since = new Date(Math.floor((Date.now() - 10 * 24 * 3600_000) / 3600_000) * 3600_000 + 1800_000);
  const at = (key: string, offsetMs: number, value: number) =>
    db.execute(sql`
      INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, value_base, result, price, created_at)
      VALUES (${id}, 'eth', 'ethereum', ${key}, ${key}, ${value}, 'done', '1', ${new Date(since.getTime() + offsetMs).toISOString()}::timestamptz)`);
  await at('edge-before', -60_000, 1);
  await at('edge-at', 0, 10);
  await at('edge-in-hour', 20 * 60_000, 100);
  await at('edge-next-hour', 40 * 60_000, 1000);
  await at('edge-hour-before', -3600_000, 10000);
  expect(await read(db, 'edge.example', since)).toEqual({ eth: '1110' });
  expect(await read(db, 'edge.example', new Date(since.getTime() + 1))).toEqual({ eth: '1100' });
  expect(await read(db, 'edge.example', new Date(since.getTime() - 60_000))).toEqual({ eth: '1111' });
  expect(await read(db, 'edge.example', new Date(since.getTime() - 3600_000))).toEqual({ eth: '11111' });
  expect(await read(db, 'edge.example', new Date(since.getTime() + 30 * 60_000))).toEqual({ eth: '1000' });
});

it('forwards of one host stored at once all count', async () => {
  const db = database.db;
  await db.execute(sql`TRUNCATE payments CASCADE`);
  const [id] = await configs(db, ['https://busy.example/cb']);
  const uuids = rowsOf<{ uuid: string }>(
    await db.execute(sql`
      INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, value_base, result)
      SELECT ${id}, 'eth', 'ethereum', 'busy' || i, 'busy' || i, 10::numeric ^ 18, 'processing' FROM generate_series(1, 40) i RETURNING uuid`),
  ).map((r) => r.uuid);
  const stored = await Promise.all(uuids.map((uuid) => storeSnapshotOnce(db, uuid, { snapshot: { uuid }, price: '2000.5', forwardedBase: 1n, feeBase: 1n })));
  expect(stored.every(Boolean)).toBe(true);
  // Stored again (a retried activity): counted once.
  await storeSnapshotOnce(db, uuids[0], { snapshot: { uuid: uuids[0] }, price: '9999', forwardedBase: 1n, feeBase: 1n });
  const since = new Date(Date.now() - 24 * 3600_000);
  expect(Number((await read(db, 'busy.example', since)).eth)).toBe(40 * 2000.5 * 1e18);
  expect(same(await read(db, 'busy.example', since))).toEqual(same(await summedFromPayments(db, 'busy.example', since)));
  await db.execute(sql`TRUNCATE payments CASCADE`);
  expect(await read(db, 'busy.example', since)).toEqual({});
});

/** A session of its own on the test database, and its stripe (drizzle/0000_init.sql: backend pid modulo 8). */
async function session(): Promise<{ client: Client; stripe: number }> {
  const client = new Client({ connectionString: database.url });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return { client, stripe: rows[0].pid % 8 };
}

it('two sessions storing forwards of one host in one hour do not wait for each other; both count', async () => {
  const db = database.db;
  await db.execute(sql`TRUNCATE payments CASCADE`);
  const [id] = await configs(db, ['https://hot.example/cb']);
  const [p1, p2] = rowsOf<{ uuid: string }>(
    await db.execute(sql`
      INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, value_base, result, price)
      SELECT ${id}, 'eth', 'ethereum', 'hot' || i, 'hot' || i, 1000 * i, 'processing', '2' FROM generate_series(1, 2) i RETURNING uuid`),
  ).map((r) => r.uuid);
  // Two sessions on different stripes (a third is opened until one differs).
  const opened: Client[] = [];
  try {
    const a = await session();
    opened.push(a.client);
    let b = await session();
    opened.push(b.client);
    while (b.stripe === a.stripe) {
      b = await session();
      opened.push(b.client);
    }
    await a.client.query('BEGIN');
    await a.client.query(`UPDATE payments SET result = 'sent' WHERE uuid = $1`, [p1]);
    // a holds its stripe's row until it commits; b, on another stripe, is not held (a 2 s lock timeout would fail it).
    await b.client.query(`SET lock_timeout = '2s'`);
    await b.client.query(`UPDATE payments SET result = 'sent' WHERE uuid = $1`, [p2]);
    await a.client.query('COMMIT');
    const since = new Date(Date.now() - 3600_000);
    expect(same(await read(db, 'hot.example', since))).toEqual(same({ eth: String(2 * 1000 + 2 * 2000) }));
    const stripes = rowsOf<{ stripe: number }>(await db.execute(sql`SELECT stripe FROM host_volume_hours WHERE host = 'hot.example' ORDER BY stripe`));
    expect(stripes.map((r) => r.stripe)).toEqual([a.stripe, b.stripe].sort((x, y) => x - y));
  } finally {
    await Promise.all(opened.map((c) => c.end()));
    await db.execute(sql`TRUNCATE payments CASCADE`);
  }
});

it("a session that opens a new hour folds the host's earlier hours into one row each, and the sums stay", async () => {
  const db = database.db;
  await db.execute(sql`TRUNCATE payments CASCADE`);
  const [id] = await configs(db, ['https://fold.example/cb']);
  const opened: Client[] = [];
  try {
    // Payments of three hours ago, stored by 6 sessions: up to 6 stripes of that hour.
    for (let i = 0; i < 6; i++) {
      const { client } = await session();
      opened.push(client);
      await client.query(
        `INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, value_base, result, price, created_at)
         VALUES ($1, $2, 'ethereum', $3, $3, $4, 'done', '1.5', now() - interval '3 hours')`,
        [id, i % 2 === 0 ? 'eth' : 'erc20_usdt', `fold${i}`, 100 * (i + 1)],
      );
    }
    const rows = async () =>
      rowsOf<{ hour: string; ticker: string; stripe: number }>(
        await db.execute(sql`SELECT hour::text, ticker, stripe FROM host_volume_hours WHERE host = 'fold.example' ORDER BY hour, ticker, stripe`),
      );
    const before = await rows();
    expect(before.length).toBeGreaterThan(2);
    const since = new Date(Date.now() - 5 * 3600_000);
    const sums = await read(db, 'fold.example', since);
    // One payment of this hour: a new row, and the earlier hour folds.
    await opened[0].query(
      `INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, value_base, result, price) VALUES ($1, 'eth', 'ethereum', 'fold-now', 'fold-now', 7, 'done', '1')`,
      [id],
    );
    const after = await rows();
    const earlier = after.filter((r) => r.hour === before[0].hour);
    expect(earlier.map((r) => [r.ticker, r.stripe])).toEqual([
      ['erc20_usdt', -1],
      ['eth', -1],
    ]);
    expect(same(await read(db, 'fold.example', since))).toEqual(same({ ...sums, eth: String(Number(sums.eth) + 7) }));
    expect(same(await read(db, 'fold.example', since))).toEqual(same(await summedFromPayments(db, 'fold.example', since)));
  } finally {
    await Promise.all(opened.map((c) => c.end()));
    await db.execute(sql`TRUNCATE payments CASCADE`);
  }
});

it('a host that opens a new hour drops its hours older than 31 days, and only its own', async () => {
  const db = database.db;
  const [a, b] = await configs(db, ['https://old.example/cb', 'https://other-old.example/cb']);
  const add = (config: string, key: string, daysAgo: number) =>
    db.execute(sql`
      INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, value_base, result, price, created_at)
      VALUES (${config}, 'eth', 'ethereum', ${key}, ${key}, 1000, 'done', '1', now() - make_interval(days => ${daysAgo}))`);
  await add(a, 'old-a', 40);
  await add(b, 'old-b', 40);
  const hours = async () => rowsOf<{ host: string; n: number }>(await db.execute(sql`SELECT host, count(*)::int AS n FROM host_volume_hours GROUP BY host ORDER BY host`));
  expect(await hours()).toEqual([{ host: 'old.example', n: 1 }, { host: 'other-old.example', n: 1 }]);
  await add(a, 'new-a', 0);
  expect(await hours()).toEqual([{ host: 'old.example', n: 1 }, { host: 'other-old.example', n: 1 }]);
  expect(await read(db, 'old.example', new Date(Date.now() - 30 * 24 * 3600_000))).toEqual({ eth: '1000' });
});
