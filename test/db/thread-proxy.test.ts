import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MessageChannel } from 'node:worker_threads';
import { eq, sql } from 'drizzle-orm';
import { createApp } from '../../api/app';
import { publicRoutes } from '../../api/routes';
import { HdSeed } from '../../src/chains/keys';
import { loadConfig } from '../../src/config';
import { openPglite, type Database, type Db } from '../../src/db/client';
import { deliveryAttempts, paymentConfigs, payments } from '../../src/db/schema';
import { ProxyClosedError, proxiedDatabase, serveQueries } from '../../src/db/thread-proxy';
import { publicMaterialFrom, publishPublicMaterial } from '../../src/addresses/public-material';
import { TEST_MNEMONIC, allChains, merchantAddress } from '../api/helpers';

/**
 * The embedded API thread's database (src/db/thread-proxy.ts): the real routes over statements that cross
 * a MessagePort to the PGlite that another thread owns, read exactly as drizzle's PGlite driver reads them.
 */
let owner: Database;
let proxy: Database;
let server: http.Server;
let base: string;

beforeAll(async () => {
  owner = await openPglite(undefined);
  await publishPublicMaterial({ db: owner.db, seed: HdSeed.fromMnemonic(TEST_MNEMONIC), chains: allChains(), poolSize: 5 });
  const { port1, port2 } = new MessageChannel();
  serveQueries(owner.pglite!, port1);
  proxy = proxiedDatabase(port2);
  ({ server, base } = await serve(proxy.db));
}, 60_000);

/** The public routes on `db`, on a random port. */
async function serve(db: Db) {
  const deps = { db, addresses: publicMaterialFrom(db), chains: allChains(), config: loadConfig({}), getPublicKeyPem: async () => undefined };
  const s = http.createServer(createApp({ routes: [(r) => publicRoutes(deps, r)], log: () => undefined }));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return {
    server: s,
    base: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
    close: () => {
      s.closeAllConnections();
      return new Promise<void>((r) => s.close(() => r()));
    },
  };
}

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await proxy?.close();
  await owner?.close();
});

const create = async (ticker: string, body: Record<string, unknown>) => {
  const r = await fetch(`${base}/api/${ticker}/create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

describe('the API over the thread proxy', () => {
  it('creates from derived and pooled addresses, repeats a create without a new address, and reads info, catalog and logs', async () => {
    const eth = await create('eth', { callback_url: 'https://shop.example/proxy/eth', address_out: merchantAddress('ethereum') });
    // The first index of TEST_MNEMONIC (BIP test vector), as test/api/create.test.ts gets on PostgreSQL.
    expect(eth).toEqual({ status: 200, body: expect.objectContaining({ status: 'success', address_in: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' }) });
    const again = await create('eth', { callback_url: 'https://shop.example/proxy/eth', address_out: merchantAddress('ethereum') });
    expect(again.body.address_in).toBe(eth.body.address_in);
    const sol = await create('sol', { callback_url: 'https://shop.example/proxy/sol', address_out: merchantAddress('solana') });
    expect(sol.status).toBe(200);
    expect(typeof sol.body.address_in).toBe('string');

    // A refused create (address_out is a deposit address) is a 1001, from the same one statement.
    const refused = await create('eth', { callback_url: 'https://shop.example/proxy/other', address_out: eth.body.address_in });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ status: 'error', code: 1001, errors: { address_out: ['Must not be a deposit address of this gateway.'] } });

    const info = await fetch(`${base}/api/eth/info`);
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({ status: 'active', minimum_transaction: expect.any(String) });
    const catalog = await fetch(`${base}/api/cryptocurrencies`);
    expect(catalog.status).toBe(200);

    // Logs of a payment with two attempts, written through the proxy (dates as parameters), read as the
    // same routes read them on the owner's own connection.
    const [config] = await owner.db.select().from(paymentConfigs).where(eq(paymentConfigs.callbackUrl, 'https://shop.example/proxy/eth'));
    const [paid] = await proxy.db
      .insert(payments)
      .values({
        configId: config.id, ticker: 'eth', network: 'ethereum', depositKey: 'deposit:ethereum:aa:0', txidIn: `0x${'aa'.repeat(32)}`,
        valueBase: '150000000000000000', forwardedBase: '148000000000000000', feeBase: '2000000000000000', feePercent: '1.00',
        price: '3000.12', confirmations: 12, result: 'sent', txidOut: `0x${'bb'.repeat(32)}`, createdAt: new Date('2026-01-01T00:00:00Z'),
        lastUpdate: new Date('2026-01-01T01:02:03.456Z'),
      })
      .returning();
    await proxy.db.insert(deliveryAttempts).values([
      { paymentUuid: paid.uuid, stage: 'pending', attempt: 1, requestUrl: 'https://shop.example/proxy/eth', responseBody: null, responseStatus: null,
        error: 'ECONNREFUSED', nextTry: new Date('2026-01-01T00:05:00Z'), pending: 1, confirmed: 0, createdAt: new Date('2026-01-01T00:00:01Z') },
      { paymentUuid: paid.uuid, stage: 'confirmed', attempt: 2, requestUrl: 'https://shop.example/proxy/eth', responseBody: 'ok', responseStatus: 200,
        pending: 0, confirmed: 1, createdAt: new Date('2026-01-01T00:10:00Z') },
    ]);
    const logsPath = `/api/eth/logs?callback=${encodeURIComponent('https://shop.example/proxy/eth')}`;
    const logs = await fetch(base + logsPath);
    expect(logs.status).toBe(200);
    const body = (await logs.json()) as { callbacks: Array<{ uuid: string; logs: unknown[] }> };
    expect(body).toMatchObject({ status: 'success', callbacks: [{ uuid: paid.uuid }] });
    expect(body.callbacks[0].logs).toHaveLength(2);
    const direct = await serve(owner.db);
    try {
      expect(await (await fetch(direct.base + logsPath)).json()).toEqual(body);
    } finally {
      await direct.close();
    }
    const rows = await owner.db.select().from(paymentConfigs);
    expect(rows.map((r) => r.callbackUrl).sort()).toEqual(['https://shop.example/proxy/eth', 'https://shop.example/proxy/sol']);
  });

  it('reads rows exactly as the PGlite driver does, and raw results carry their rows', async () => {
    expect(await proxy.db.select().from(paymentConfigs)).toEqual(await owner.db.select().from(paymentConfigs));
    expect(await proxy.db.select().from(payments)).toEqual(await owner.db.select().from(payments));
    expect(await proxy.db.select().from(deliveryAttempts)).toEqual(await owner.db.select().from(deliveryAttempts));
    const raw = (await proxy.db.execute(sql`SELECT 1::int8 AS one, now()::timestamptz AS at, 'a'::text AS t`)) as unknown as { rows: Array<Record<string, unknown>> };
    const direct = (await owner.db.execute(sql`SELECT 1::int8 AS one, 'a'::text AS t`)) as unknown as { rows: Array<Record<string, unknown>> };
    expect(raw.rows[0].one).toEqual(direct.rows[0].one);
    expect(typeof raw.rows[0].at).toBe('string');
  });

  it('keeps a database error its code and constraint (the create branches on them)', async () => {
    const [row] = await owner.db.select().from(paymentConfigs).limit(1);
    const e = await proxy.db
      .execute(sql`INSERT INTO payment_configs SELECT * FROM payment_configs WHERE id = ${row.id}`)
      .then(() => undefined, (err: unknown) => err);
    // drizzle wraps a driver's error (as it does for node-postgres and PGlite); the cause keeps the fields.
    const cause = (e as { cause?: unknown }).cause;
    expect(cause).toBeInstanceOf(Error);
    expect(cause).toMatchObject({ code: '23505' });
    expect(typeof (cause as { constraint?: unknown }).constraint).toBe('string');
  });

  it('fails calls at once, never hangs, once the owner is gone', async () => {
    const { port1, port2 } = new MessageChannel();
    const orphan = proxiedDatabase(port2);
    const pending = orphan.db.execute(sql`SELECT 1`).then(() => 'answered', (e: unknown) => e);
    port1.close();
    expect(((await pending) as { cause?: unknown }).cause).toBeInstanceOf(ProxyClosedError);
    const later = await orphan.db.execute(sql`SELECT 1`).then(() => 'answered', (e: unknown) => e);
    expect((later as { cause?: unknown }).cause).toBeInstanceOf(ProxyClosedError);
  });
});
