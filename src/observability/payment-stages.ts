import { and, count, gt, inArray, min, sql } from 'drizzle-orm';
import { Gauge } from 'prom-client';
import type { Db } from '../db/client';
import { payments } from '../db/schema';
import { registry } from './metrics';

/** Stages a payment passes through on its way to done: one stuck in any of them too long is an alert. */
const OPEN_STAGES = ['pending', 'processing', 'sent'] as const;
/** A scrape reads the database at most this often; Prometheus scrapes every 15 to 60 s. */
const REFRESH_MS = 30_000;
/**
 * Only payments created this recently are looked at, so that the read stays on payments_created_at_idx
 * however many payments the table holds: a payment stuck longer has alerted for weeks already.
 */
const WINDOW = sql`now() - interval '30 days'`;

export const paymentsInStage = new Gauge({
  name: 'gateway_payments_in_stage',
  help: 'Payments of the last 30 days in an open stage (pending, processing, sent), by stage',
  labelNames: ['stage'] as const,
  registers: [registry],
});

export const paymentStageOldest = new Gauge({
  name: 'gateway_payment_stage_oldest_seconds',
  help: 'How long the payment longest in an open stage (pending, processing, sent) has been there, by stage',
  labelNames: ['stage'] as const,
  registers: [registry],
});

/** Fills both gauges from `db` when a scrape asks (at most every REFRESH_MS); a failed read keeps the last values. */
export function exposePaymentStages(db: Db): void {
  let readAt = 0;
  let reading: Promise<void> = Promise.resolve();
  const read = async () => {
    const since = min(sql<Date>`coalesce(${payments.lastUpdate}, ${payments.createdAt})`);
    const rows = await db
      .select({ stage: payments.result, n: count(), age: sql<string | null>`extract(epoch from now() - ${since})` })
      .from(payments)
      .where(and(gt(payments.createdAt, WINDOW), inArray(payments.result, [...OPEN_STAGES])))
      .groupBy(payments.result);
    for (const stage of OPEN_STAGES) {
      const r = rows.find((x) => x.stage === stage);
      paymentsInStage.set({ stage }, r ? Number(r.n) : 0);
      paymentStageOldest.set({ stage }, r?.age ? Math.max(0, Number(r.age)) : 0);
    }
  };
  // Both gauges' collect() (prom-client calls it at each scrape) share one read.
  const collect = () => {
    if (Date.now() - readAt >= REFRESH_MS) {
      readAt = Date.now();
      reading = read().catch(() => undefined);
    }
    return reading;
  };
  for (const g of [paymentsInStage, paymentStageOldest]) (g as unknown as { collect?: () => Promise<void> }).collect = collect;
}
