import fs from 'node:fs';
import { getTableName, is, sql } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { MIGRATIONS_FOLDER } from '../../src/db/client';
import { rowsOf } from '../../src/db/prepared';
import { peekNextIndex, takeIndexes } from '../../src/db/queries/derivation';
import { NETWORKS } from '../../src/domain/assets';
import * as schema from '../../src/db/schema';
import { queryRows } from '../api/helpers';
import { createTestDatabase } from '../helpers/db';
import { journal, onDatabaseBefore } from '../helpers/migrations';

/**
 * Migrations merged from parallel branches stay whole: every SQL file is in the journal, in order, with
 * increasing times (drizzle applies one only when its time is after the last applied), and a fresh
 * database gets every table the schema declares.
 */

it('lists every migration file once, in order, with increasing times', () => {
  const files = fs.readdirSync(MIGRATIONS_FOLDER).filter((f) => f.endsWith('.sql')).map((f) => f.replace(/\.sql$/, '')).sort();
  expect(journal.entries.map((e) => e.tag)).toEqual(files);
  journal.entries.forEach((e, i) => {
    expect(e.idx).toBe(i);
    if (i > 0) expect(e.when).toBeGreaterThan(journal.entries[i - 1].when);
  });
});

it('a fresh database has every table of the schema', async () => {
  const database = await createTestDatabase();
  try {
    const rows = await queryRows<{ tablename: string }>(database.db, sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`);
    const have = new Set(rows.map((r) => r.tablename));
    const declared = Object.values(schema).filter((t) => is(t, PgTable)).map((t) => getTableName(t as PgTable));
    expect(declared.filter((t) => !have.has(t))).toEqual([]);
  } finally {
    await database.drop();
  }
});

it('every address family has its index sequence; a database of counters goes on where each stood', async () => {
  // The migrations before the sequences', from a copy of the folder; then counters as a running gateway left them.
  await onDatabaseBefore('0010_derivation_sequences', async (db, upgrade) => {
    await db.execute(sql`INSERT INTO derivation_counters (family, next_index) VALUES ('evm', 7), ('ltc', 0), ('retired', 3)`);
    await upgrade();
    expect(await peekNextIndex(db, 'evm')).toBe(7n);
    expect(await takeIndexes(db, 'evm', 2)).toEqual([7n, 8n]);
    expect(await takeIndexes(db, 'ltc', 1)).toEqual([0n]);
    expect(await peekNextIndex(db, 'retired')).toBe(3n);
    for (const family of new Set(Object.values(NETWORKS).map((n) => n.addressFamily))) {
      expect([family, (await takeIndexes(db, family, 1))[0] >= 0n]).toEqual([family, true]);
    }
    const [{ n }] = rowsOf<{ n: number }>(await db.execute(sql`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'derivation_counters'`));
    expect(n).toBe(0);
  });
});
