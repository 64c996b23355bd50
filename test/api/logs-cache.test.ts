import { sql } from 'drizzle-orm';
import { Client } from 'pg';
import { LOGS_CHANNEL, LogsCache } from '../../api/logs-cache';
import { listenOn } from '../../src/db/client';
import { deliveryAttempts, payments } from '../../src/db/schema';
import { waitFor } from '../helpers/process';
import { callCreate, merchantAddress, startApi, type TestApi } from './helpers';

/**
 * GET /logs through the cache the production API keeps (api/logs-cache.ts) on the real server: every
 * change written straight into the database shows in the very next read, with no wait, and a kept body
 * is served only while nothing it shows has changed.
 */

let api: TestApi;
let cache: LogsCache;
const CB = 'https://shop.example/cached?order=1';
const OTHER_CB = 'https://shop.example/cached?order=2';
let config: string;
let other: string;

const logsOf = (callback: string, ticker = 'btc') => api.json(`/api/${ticker}/logs?callback=${encodeURIComponent(callback)}`);
const callbacksOf = async (callback: string) => (await logsOf(callback)).body.callbacks as Array<Record<string, unknown> & { logs: unknown[] }>;

/** The API's listening connection, found by the application_name listenOn gives it. */
async function killListener(): Promise<void> {
  const admin = new Client({ connectionString: api.url });
  await admin.connect();
  try {
    const r = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [
      `listen ${LOGS_CHANNEL}`,
    ]);
    expect(r.rowCount).toBe(1);
  } finally {
    await admin.end();
  }
}

/** Reads twice: the second read must come from the cache (one more hit). */
async function expectKept(callback: string): Promise<void> {
  await logsOf(callback);
  const hits = cache.hits;
  const r = await logsOf(callback);
  expect(r.status).toBe(200);
  expect(cache.hits).toBe(hits + 1);
}

/** Waits until the cache listens: a second read of the same logs is then a hit. */
const listening = (what: string) =>
  waitFor(async () => {
    const hits = cache.hits;
    await logsOf(CB);
    await logsOf(CB);
    return cache.hits > hits;
  }, 10_000, what);

let n = 0;
const payment = (configId: string, over: Partial<typeof payments.$inferInsert> = {}): typeof payments.$inferInsert => {
  n++;
  return {
    configId, ticker: 'btc', network: 'bitcoin', depositKey: `deposit:bitcoin:${n}:0`, txidIn: n.toString(16).padStart(64, '0'), vout: 0,
    valueBase: '150000000', forwardedBase: '148000000', feeBase: '2000000', feePercent: '1.00', confirmations: 6, result: 'done',
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)), ...over,
  };
};

beforeAll(async () => {
  api = await startApi();
  cache = new LogsCache().attach((hearer) => listenOn(api.url, LOGS_CHANNEL, hearer, 200));
  api.deps.logsCache = cache;
  for (const cb of [CB, OTHER_CB]) await callCreate(api, '/api/btc/create', 'POST JSON', { callback_url: cb, address_out: merchantAddress('bitcoin') });
  const rows = await api.db.query.paymentConfigs.findMany();
  config = rows.find((r) => r.callbackUrl === CB)!.id;
  other = rows.find((r) => r.callbackUrl === OTHER_CB)!.id;
  await listening('the cache listening');
});
afterAll(async () => {
  await cache.close();
  await api.close();
});

it('a kept body is the body the database gives', async () => {
  const fresh = await fetch(`${api.base}/api/btc/logs?callback=${encodeURIComponent(CB)}&x=`); // not the cache's shape: answered 1001
  expect(fresh.status).toBe(422);
  await api.db.insert(payments).values(payment(config));
  const first = await api.get(`/api/btc/logs?callback=${encodeURIComponent(CB)}`);
  const hits = cache.hits;
  const second = await api.get(`/api/btc/logs?callback=${encodeURIComponent(CB)}`);
  expect(cache.hits).toBe(hits + 1);
  expect(second.status).toBe(200);
  expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
  expect(await second.text()).toBe(await first.text());
});

it('every change committed before a read shows in it, with no wait: payments inserted and updated, attempts added', async () => {
  const [p] = await api.db.insert(payments).values(payment(config, { result: 'sent', confirmations: 2 })).returning();
  for (let i = 0; i < 20; i++) {
    await expectKept(CB);
    await api.db.update(payments).set({ confirmations: 10 + i }).where(sql`${payments.uuid} = ${p.uuid}`);
    expect((await callbacksOf(CB)).find((c) => c.uuid === p.uuid)!.confirmations).toBe(10 + i);
    await expectKept(CB);
    await api.db.insert(deliveryAttempts).values({ paymentUuid: p.uuid, stage: 'confirmed', attempt: i + 1, requestUrl: CB, pending: 0, confirmed: 0 });
    expect((await callbacksOf(CB)).find((c) => c.uuid === p.uuid)!.logs).toHaveLength(i + 1);
  }
  await expectKept(CB);
  await api.db.insert(payments).values(payment(config));
  const count = (await api.db.select().from(payments).where(sql`${payments.configId} = ${config}`)).length;
  expect(await callbacksOf(CB)).toHaveLength(count);
});

it("another configuration's change leaves a kept body kept", async () => {
  await expectKept(CB);
  await api.db.insert(payments).values(payment(other));
  const hits = cache.hits;
  await logsOf(CB);
  expect(cache.hits).toBe(hits + 1);
  expect(await callbacksOf(OTHER_CB)).toHaveLength(1);
});

it("a body counting a waiting deposit's confirmations from the chain tip is kept until the tip moves, and the move shows at once", async () => {
  const cb = 'https://shop.example/cached-live';
  await callCreate(api, '/api/btc/create', 'POST JSON', { callback_url: cb, address_out: merchantAddress('bitcoin'), confirmations: 6 });
  const live = (await api.db.query.paymentConfigs.findMany()).find((r) => r.callbackUrl === cb)!.id;
  await api.db.insert(payments).values(payment(live, { blockNumber: 100n, confirmations: 1, result: 'pending' }));
  await api.db.execute(sql`INSERT INTO chain_cursors (network, height, block_hash) VALUES ('bitcoin', 101, 'ff') ON CONFLICT (network) DO UPDATE SET height = 101`);
  expect((await callbacksOf(cb))[0].confirmations).toBe(2);
  await expectKept(cb);
  // Another network's tip, and this one's hash alone, leave it kept.
  await api.db.execute(sql`INSERT INTO chain_cursors (network, height, block_hash) VALUES ('litecoin', 7, 'aa') ON CONFLICT (network) DO UPDATE SET height = chain_cursors.height + 1`);
  await api.db.execute(sql`UPDATE chain_cursors SET block_hash = 'fe' WHERE network = 'bitcoin'`);
  let hits = cache.hits;
  expect((await callbacksOf(cb))[0].confirmations).toBe(2);
  expect(cache.hits).toBe(hits + 1);
  for (const height of [103, 104, 102]) {
    await api.db.execute(sql`UPDATE chain_cursors SET height = ${height} WHERE network = 'bitcoin'`);
    hits = cache.hits;
    expect((await callbacksOf(cb))[0].confirmations).toBe(height - 99);
    expect(cache.hits).toBe(hits);
  }
  // A body with no waiting deposit does not move with the tip.
  await expectKept(CB);
  await api.db.execute(sql`UPDATE chain_cursors SET height = 110 WHERE network = 'bitcoin'`);
  hits = cache.hits;
  await logsOf(CB);
  expect(cache.hits).toBe(hits + 1);
  await api.db.execute(sql`DELETE FROM chain_cursors WHERE network IN ('bitcoin', 'litecoin')`);
  expect((await callbacksOf(cb))[0].confirmations).toBe(1);
});

it('a TRUNCATE forgets every body', async () => {
  await expectKept(CB);
  await api.db.execute(sql`TRUNCATE delivery_attempts`);
  expect((await callbacksOf(CB)).every((c) => c.logs.length === 0)).toBe(true);
});

it('a query in any other shape is judged as without the cache', async () => {
  await expectKept(CB);
  for (const q of [`callback=${encodeURIComponent(CB)}&callback=${encodeURIComponent(CB)}`, `callback=${encodeURIComponent(CB)}&pending=1`]) {
    const r = await api.json(`/api/btc/logs?${q}`);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe(1001);
  }
  // The key holds the ticker: the same callback read as another ticker of the family is read afresh.
  expect((await logsOf(CB, 'eth')).body.code).toBe(1201);
});

it('with the listening connection lost nothing is served from the cache, and caching resumes once it is back', async () => {
  await expectKept(CB);
  await killListener();
  // Until the loss is heard a read may still be a hit, but never a stale one: the round trip fails first.
  const [p] = await api.db.insert(payments).values(payment(config)).returning();
  expect((await callbacksOf(CB)).some((c) => c.uuid === p.uuid)).toBe(true);
  await listening('the cache listening again');
  await api.db.update(payments).set({ result: 'failed' }).where(sql`${payments.uuid} = ${p.uuid}`);
  expect((await callbacksOf(CB)).find((c) => c.uuid === p.uuid)!.result).toBe('failed');
});

describe('the cache alone', () => {
  const quiet = { ping: () => Promise.resolve(), close: () => Promise.resolve() };
  const make = (limits?: ConstructorParameters<typeof LogsCache>[0]) => {
    const c = new LogsCache(limits).attach(() => quiet);
    c.ready();
    return c;
  };

  it('a read in flight when its configuration or its tip is named is not kept; one named for another is', async () => {
    const c = make();
    let since = c.begin();
    c.notice('config-a');
    c.put('k', ['config-a'], 'old', since);
    expect(await c.lookup('k')).toBeUndefined();
    since = c.begin();
    c.notice('config-b');
    c.put('k', ['config-a', 'tip:bitcoin'], 'new', since);
    expect(await c.lookup('k')).toBe('new');
    c.notice('tip:bitcoin');
    expect(await c.lookup('k')).toBeUndefined();
    since = c.begin();
    c.notice('tip:bitcoin');
    c.put('k', ['config-a', 'tip:bitcoin'], 'newer', since);
    expect(await c.lookup('k')).toBeUndefined();
    c.put('k', ['config-a'], 'newest', c.begin());
    c.notice('tip:bitcoin');
    expect(await c.lookup('k')).toBe('newest');
    c.notice('config-a');
    expect(await c.lookup('k')).toBeUndefined();
  });

  it('a read that began before a loss, or before more notices than it remembers, is not kept', async () => {
    const c = make();
    let since = c.begin();
    c.lost();
    c.ready();
    c.put('k', ['a'], 'x', since);
    expect(await c.lookup('k')).toBeUndefined();
    since = c.begin();
    for (let i = 0; i < 2_000; i++) c.notice(`other-${i}`);
    c.put('k', ['a'], 'x', since);
    expect(await c.lookup('k')).toBeUndefined();
    c.lost();
    expect(c.begin()).toBe(-1);
  });

  it('keeps at most its limits, the oldest going first', async () => {
    const c = make({ entries: 2, chars: 10, bodyChars: 6 });
    c.put('a', ['1'], 'aaaa', c.begin());
    c.put('b', ['2'], 'bbbb', c.begin());
    c.put('c', ['3'], 'cccc', c.begin());
    expect([await c.lookup('a'), await c.lookup('b'), await c.lookup('c')]).toEqual([undefined, 'bbbb', 'cccc']);
    c.put('d', ['4'], 'dddddd', c.begin());
    expect([await c.lookup('b'), await c.lookup('c'), await c.lookup('d')]).toEqual([undefined, 'cccc', 'dddddd']);
    c.put('e', ['5'], 'eeeeeee', c.begin());
    expect(await c.lookup('e')).toBeUndefined();
    expect(c.size).toBe(2);
  });

  it('requests arriving while a round trip is in flight share the next one, which starts after it', async () => {
    const trips: Array<() => void> = [];
    const c = new LogsCache().attach(() => ({ ping: () => new Promise<void>((r) => trips.push(r)), close: () => Promise.resolve() }));
    c.ready();
    c.put('k', ['a'], 'x', c.begin());
    const first = c.lookup('k');
    await Promise.resolve();
    expect(trips).toHaveLength(1);
    const later = [c.lookup('k'), c.lookup('k'), c.lookup('k')];
    await Promise.resolve();
    expect(trips).toHaveLength(1);
    trips[0]();
    expect(await first).toBe('x');
    await waitFor(() => trips.length === 2, 1_000, 'the second round trip');
    // A notice heard during the second trip is seen by the requests that waited for it.
    c.notice('a');
    trips[1]();
    expect(await Promise.all(later)).toEqual([undefined, undefined, undefined]);
  });
});
