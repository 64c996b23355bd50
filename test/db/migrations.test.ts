import fs from 'node:fs';
import path from 'node:path';
import { getTableName, is, sql } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { MIGRATIONS_FOLDER } from '../../src/db/client';
import * as schema from '../../src/db/schema';
import { queryRows } from '../api/helpers';
import { createTestDatabase } from '../helpers/db';

/**
 * Migrations merged from parallel branches stay whole: every SQL file is in the journal, in order, with
 * increasing times (drizzle applies one only when its time is after the last applied), and a fresh
 * database gets every table the schema declares.
 */
const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as {
  entries: Array<{ idx: number; when: number; tag: string }>;
};

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
