import fs from 'node:fs';
import path from 'node:path';
import { getTableName, is, sql } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { generateDrizzleJson, generateMigration } from 'drizzle-kit/api';
import { Client } from 'pg';
import { MIGRATIONS_FOLDER } from '../../src/db/client';
import { takeIndexes } from '../../src/db/queries/derivation';
import { NETWORKS } from '../../src/domain/assets';
import * as schema from '../../src/db/schema';
import { queryRows } from '../api/helpers';
import { createTestDatabase } from '../helpers/db';
import { callbackColumns } from '../helpers/callback-columns';

/**
 * One initial migration (no deployment held data when the history was squashed at v1.0.0), then one per
 * change since: the journal names exactly
 * the SQL files there are, its snapshot is what src/db/schema.ts declares (`npm run db:generate` has nothing
 * to write), a fresh database gets exactly that schema and the objects drizzle cannot declare, and migrating
 * again changes nothing. The API role's grants are checked by test/security/api-role.test.ts.
 */

const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as {
  entries: Array<{ idx: number; when: number; tag: string }>;
};
const tables = Object.values(schema).filter((t) => is(t, PgTable)) as PgTable[];
const families = [...new Set(Object.values(NETWORKS).map((n) => n.addressFamily))].sort();

it('the journal lists every migration file once, in order, each with its snapshot', () => {
  const files = fs.readdirSync(MIGRATIONS_FOLDER).filter((f) => f.endsWith('.sql')).map((f) => f.replace(/\.sql$/, '')).sort();
  expect(journal.entries.map((e) => e.tag)).toEqual(files);
  expect(files[0]).toBe('0000_init');
  journal.entries.forEach((e, i) => {
    expect(e.idx).toBe(i);
    expect(fs.existsSync(path.join(MIGRATIONS_FOLDER, 'meta', `${String(i).padStart(4, '0')}_snapshot.json`))).toBe(true);
  });
});

it('the last snapshot is the schema src/db/schema.ts declares: db:generate has nothing to write', async () => {
  const last = String(journal.entries.length - 1).padStart(4, '0');
  const snapshot = JSON.parse(fs.readFileSync(path.join(MIGRATIONS_FOLDER, 'meta', `${last}_snapshot.json`), 'utf8'));
  expect(await generateMigration(snapshot, generateDrizzleJson(schema, snapshot.id))).toEqual([]);
  // The comparison sees a difference when there is one: the schema without a table is a DROP.
  const { sweeps: _dropped, ...fewer } = schema;
  expect((await generateMigration(snapshot, generateDrizzleJson(fewer, snapshot.id))).join('\n')).toMatch(/DROP TABLE "sweeps"/);
}, 60_000);

it('a fresh database has exactly the schema, the sequences, triggers and functions the code relies on; migrating again changes nothing', async () => {
  const database = await createTestDatabase();
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    const shape = async () => ({
      tables: (await client.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`)).rows.map((r) => r.t),
      columns: (await client.query<{ c: string }>(
        `SELECT table_name || '.' || column_name AS c FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1`,
      )).rows.map((r) => r.c),
      indexes: (await client.query<{ i: string }>(`SELECT indexname AS i FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1`)).rows.map((r) => r.i),
      sequences: (await client.query<{ s: string }>(`SELECT sequencename AS s FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1`)).rows.map((r) => r.s),
      triggers: (await client.query<{ t: string }>(
        `SELECT tgrelid::regclass || '.' || tgname AS t FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1`,
      )).rows.map((r) => r.t),
      functions: (await client.query<{ f: string }>(
        `SELECT proname AS f FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY 1`,
      )).rows.map((r) => r.f),
    });
    const before = await shape();

    expect(before.tables).toEqual(tables.map((t) => getTableName(t)).sort());
    expect(before.columns).toEqual(tables.flatMap((t) => getTableConfig(t).columns.map((c) => `${getTableName(t)}.${c.name}`)).sort());
    const declaredIndexes = tables.flatMap((t) => getTableConfig(t).indexes.map((i) => i.config.name!));
    expect(before.indexes.filter((i) => !i.endsWith('_pkey') && !i.endsWith('_pk'))).toEqual(declaredIndexes.sort());
    // One derivation sequence per address family (and delivery_attempts' bigserial).
    expect(before.sequences).toEqual([...families.map((f) => `derivation_index_${f}`), 'delivery_attempts_id_seq'].sort());
    for (const family of families) expect(await takeIndexes(database.db, family, 2)).toEqual([0n, 1n]);
    // The /logs cache's notices, on every table whose rows a configuration's logs show, and the fee tier's volume.
    expect(before.triggers).toEqual([
      'chain_cursors.chain_cursors_logs_inserted', 'chain_cursors.chain_cursors_logs_moved', 'chain_cursors.chain_cursors_logs_truncated',
      'delivery_attempts.delivery_attempts_logs_changed', 'delivery_attempts.delivery_attempts_logs_truncated',
      'payment_configs.payment_configs_logs_changed', 'payment_configs.payment_configs_logs_truncated',
      'payments.payments_host_volume', 'payments.payments_host_volume_truncate', 'payments.payments_logs_changed', 'payments.payments_logs_truncated',
    ]);
    expect(before.functions).toEqual(['gateway_logs_changed', 'host_volume_add', 'payments_host_volume', 'payments_host_volume_truncate']);
    const [{ n: roles }] = await queryRows<{ n: number }>(database.db, sql`SELECT count(*)::int AS n FROM pg_roles WHERE rolname = 'gateway_api'`);
    expect(roles).toBe(1);

    // Migrating again (a restarted worker, a second one) applies nothing and changes nothing.
    await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER });
    const applied = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations');
    expect(applied.rows[0].n).toBe(journal.entries.length);
    const after = await shape();
    expect(after).toEqual(before);
    expect(await takeIndexes(database.db, families[0], 1)).toEqual([2n]);
  } finally {
    await client.end();
    await database.drop();
  }
}, 60_000);

it("every column is NOT NULL exactly where src/db/schema.ts says so (the hand-kept SQL matches the schema's)", async () => {
  const database = await createTestDatabase();
  try {
    const rows = await queryRows<{ c: string; nullable: string }>(database.db, sql`
      SELECT table_name || '.' || column_name AS c, is_nullable AS nullable FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1`);
    const declared = tables.flatMap((t) => getTableConfig(t).columns.map((c) => [`${getTableName(t)}.${c.name}`, c.notNull ? 'NO' : 'YES']));
    expect(rows.map((r) => [r.c, r.nullable])).toEqual(declared.sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  } finally {
    await database.drop();
  }
}, 60_000);

it('a payment configuration without its callback key or host is refused: a null key would escape the unique index (DESIGN 15), a null host the fee tier', async () => {
  const database = await createTestDatabase();
  try {
    const url = (n: number) => `https://shop.example/cb/${n}`;
    const insert = (n: number, key: string | null, host: string | null) =>
      database.db.execute(sql`
        INSERT INTO payment_configs (callback_url, callback_key, callback_host, ticker, family, address_in, address_out, derivation_index,
          notify_pending, notify_confirmations, post, json, convert, priority)
        VALUES (${url(n)}, ${key}, ${host}, 'eth', 'evm', ${`0x${String(n).padStart(40, '0')}`}, ${`0x${'b'.repeat(40)}`}, ${n},
          false, 12, 0, 0, 0, 'default')`);
    const refusal = (e: unknown) => {
      const { code, column } = ((e as { cause?: unknown }).cause ?? e) as { code?: string; column?: string };
      return { code, column };
    };
    await insert(1, callbackColumns(url(1)).callbackKey, callbackColumns(url(1)).callbackHost);
    // Two without a key: the unique index sees neither, so each would be one more configuration of no key.
    await expect(insert(2, null, callbackColumns(url(2)).callbackHost).catch(refusal)).resolves.toEqual({ code: '23502', column: 'callback_key' });
    await expect(insert(3, null, callbackColumns(url(3)).callbackHost).catch(refusal)).resolves.toEqual({ code: '23502', column: 'callback_key' });
    await expect(insert(4, callbackColumns(url(4)).callbackKey, null).catch(refusal)).resolves.toEqual({ code: '23502', column: 'callback_host' });
    const [{ n }] = await queryRows<{ n: number }>(database.db, sql`SELECT count(*)::int AS n FROM payment_configs`);
    expect(n).toBe(1);
  } finally {
    await database.drop();
  }
}, 60_000);
