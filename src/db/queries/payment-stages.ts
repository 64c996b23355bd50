import { and, count, gt, inArray, min, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { payments } from '../schema';

export interface StageTally {
  stage: string;
  n: number;
  /** Seconds the payment longest in the stage has been there. */
  ageS: number;
}

/**
 * Payments per stage among `stages`, and the age of the oldest in each. Only payments created in the last 30
 * days are looked at, so that the read stays on payments_created_at_idx however many payments the table
 * holds: a payment stuck longer has alerted for weeks already.
 */
export async function stageTallies(db: Db, stages: readonly string[]): Promise<StageTally[]> {
  const since = min(sql<Date>`coalesce(${payments.lastUpdate}, ${payments.createdAt})`);
  const rows = await db
    .select({ stage: payments.result, n: count(), age: sql<string | null>`extract(epoch from now() - ${since})` })
    .from(payments)
    .where(and(gt(payments.createdAt, sql`now() - interval '30 days'`), inArray(payments.result, [...stages])))
    .groupBy(payments.result);
  return rows.map((r) => ({ stage: r.stage, n: Number(r.n), ageS: r.age ? Math.max(0, Number(r.age)) : 0 }));
}
