import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { MIGRATIONS_FOLDER, type Db } from '../../src/db/client';

/** The migration journal: its entries in order, each with its time and tag (the SQL file's name). */
export const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as {
  entries: Array<{ idx: number; when: number; tag: string }>;
};

/**
 * A copy of the migrations folder that stops before `tag`: a database migrated from it is one a running
 * gateway of that time left, for a test of what `tag` does to existing rows. remove() deletes the copy.
 */
export function migrationsBefore(tag: string): { folder: string; remove(): void } {
  const upTo = journal.entries.findIndex((e) => e.tag === tag);
  if (upTo < 0) throw new Error(`no migration ${tag}`);
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-migrations-'));
  fs.mkdirSync(path.join(folder, 'meta'));
  fs.writeFileSync(path.join(folder, 'meta/_journal.json'), JSON.stringify({ ...journal, entries: journal.entries.slice(0, upTo) }));
  for (const e of journal.entries.slice(0, upTo)) fs.copyFileSync(path.join(MIGRATIONS_FOLDER, `${e.tag}.sql`), path.join(folder, `${e.tag}.sql`));
  return { folder, remove: () => fs.rmSync(folder, { recursive: true, force: true }) };
}

/**
 * A PGlite database migrated up to just before `tag`, as a running gateway of that time left it: `fn` fills
 * it, calls `upgrade()` to apply the migrations from `tag` on, and checks. Closed and its folder copy removed
 * after, whatever `fn` did.
 */
export async function onDatabaseBefore<T>(tag: string, fn: (db: Db, upgrade: () => Promise<void>) => Promise<T>): Promise<T> {
  const old = migrationsBefore(tag);
  const client = new PGlite();
  try {
    await migrate(drizzle(client), { migrationsFolder: old.folder });
    return await fn(drizzle(client) as unknown as Db, () => migrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER }));
  } finally {
    await client.close();
    old.remove();
  }
}
