import { Gauge } from 'prom-client';
import { registry } from './metrics';

/** Stages a payment passes through on its way to done: one stuck in any of them too long is an alert. */
const OPEN_STAGES = ['pending', 'processing', 'sent'] as const;
/** A scrape reads the database at most this often; Prometheus scrapes every 15 to 60 s. */
const REFRESH_MS = 30_000;

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

/** A stage's count and the age in seconds of its oldest payment (src/db/queries/payment-stages.ts). */
export type ReadStages = (stages: readonly string[]) => Promise<Array<{ stage: string; n: number; ageS: number }>>;

/** Fills both gauges from `readStages` when a scrape asks (at most every REFRESH_MS); a failed read keeps the last values. */
export function exposePaymentStages(readStages: ReadStages): void {
  let readAt = 0;
  let reading: Promise<void> = Promise.resolve();
  const read = async () => {
    const rows = await readStages(OPEN_STAGES);
    for (const stage of OPEN_STAGES) {
      const r = rows.find((x) => x.stage === stage);
      paymentsInStage.set({ stage }, r ? r.n : 0);
      paymentStageOldest.set({ stage }, r ? r.ageS : 0);
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
