import { eq } from 'drizzle-orm';
import { payments } from '../../src/db/schema';
import { registry } from '../../src/observability/metrics';
import { stageTallies } from '../../src/db/queries/payment-stages';
import { exposePaymentStages } from '../../src/observability/payment-stages';
import { createTestDatabase } from '../helpers/db';
import { seedPayment } from '../callbacks/helpers/seed';

/** The stage gauges the GatewayPaymentStuck alert reads, filled from the database when metrics are scraped. */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

const values = async (name: string) =>
  Object.fromEntries(((await registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? []).map((v) => [String(v.labels.stage), v.value]));

it('tells per open stage how many payments are there and how long the oldest has been', async () => {
  const db = database.db;
  let n = 0;
  const seed = (result: string) => seedPayment(db, { callbackUrl: `https://merchant.example/cb/${++n}`, result });
  const stuck = await seed('processing');
  await db.update(payments).set({ lastUpdate: new Date(Date.now() - 2 * 3600_000) }).where(eq(payments.uuid, stuck.uuid));
  await seed('processing');
  await seed('sent');
  await seed('done');
  exposePaymentStages((stages) => stageTallies(db, stages));

  expect(await values('gateway_payments_in_stage')).toEqual({ pending: 0, processing: 2, sent: 1 });
  const oldest = await values('gateway_payment_stage_oldest_seconds');
  expect(oldest.processing).toBeGreaterThanOrEqual(7200);
  expect(oldest.processing).toBeLessThan(7200 + 120);
  expect(oldest.sent).toBeLessThan(120);
  expect(oldest.pending).toBe(0);
});
