import { sql } from 'drizzle-orm';
import type { Db } from '../src/db/client';

export interface ActivityDeps {
  db: Db;
}

/** Every side effect a workflow needs, built from its dependencies (temporalio/samples-typescript style). */
export function createActivities(deps: ActivityDeps) {
  return {
    async databaseTime(): Promise<string> {
      const rows = await deps.db.execute<{ now: string }>(sql`SELECT now()::text AS now`);
      const list = (Array.isArray(rows) ? rows : (rows as { rows: { now: string }[] }).rows) as { now: string }[];
      return list[0].now;
    },
  };
}
