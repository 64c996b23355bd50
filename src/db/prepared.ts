import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Db } from './client';

const dialect = new PgDialect();

/** A raw statement's prepared form on one database handle. */
interface Prepared {
  execute(values: Record<string, unknown>): Promise<unknown>;
}

/**
 * `build(db)` made once per database handle and kept: a statement prepared under a fixed name is built
 * once, and each connection of the handle parses it once.
 */
export function oncePerDb<T>(build: (db: Db) => T): (db: Db) => T {
  const byDb = new WeakMap<Db, T>();
  return (db) => {
    let made = byDb.get(db);
    if (made === undefined) byDb.set(db, (made = build(db)));
    return made;
  };
}

/**
 * A raw SQL statement (its values as `sql.placeholder(name)`) prepared once per database handle under a
 * fixed name: on PostgreSQL each connection parses it once and, after its first few runs, reuses a
 * generic plan, where `db.execute` parsed and planned the text at every call. Rows come back as
 * `db.execute` gives them (node-postgres: a result with `rows`; PGlite and the thread proxy alike).
 */
export function preparedStatement(name: string, query: SQL): (db: Db, values: Record<string, unknown>) => Promise<unknown> {
  const compiled = dialect.sqlToQuery(query);
  const prepared = oncePerDb((db) => db._.session.prepareQuery(compiled, undefined, name, false) as Prepared);
  return (db, values) => prepared(db).execute(values);
}

/** A named value of a prepared statement: `sql.placeholder(name)`. */
export const $ = (name: string) => sql.placeholder(name);

/**
 * A placeholder where drizzle's types take only SQL (an update's `set`). Its value goes to the driver as
 * given, not through the column's encoder: a time as an ISO string, JSON as its text.
 */
export const slot = (name: string): SQL => sql`${sql.placeholder(name)}`;

/** Rows of a raw query, from node-postgres and PGlite alike. */
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}
