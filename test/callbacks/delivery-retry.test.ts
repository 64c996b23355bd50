import crypto from 'node:crypto';
import { createDeliveryActivities } from '../../activities/delivery';
import { loadSigner } from '../../src/callbacks/signer';
import { deliveryAttempts } from '../../src/db/schema';
import { eq } from 'drizzle-orm';
import { createTestDatabase } from '../helpers/db';
import { paymentOf, seedPayment } from './helpers/seed';

/**
 * A worker lost between storing a delivered confirmed attempt and marking its payment done: the attempt's
 * retry (the workflow re-runs the gateway's own failures at once) returns the stored outcome without
 * sending again, and finishes the step, so the payment never stays `sent` after its merchant said 200.
 */
it('a retried attempt that was already delivered marks the payment done, and sends nothing', async () => {
  const database = await createTestDatabase();
  try {
    const signer = loadSigner({
      dataDir: '/nonexistent',
      signingKeyFile: undefined,
      signingKeyPem: crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    });
    // The callback URL is never contacted: the stored row answers.
    const { uuid, snapshot } = await seedPayment(database.db, { callbackUrl: 'https://shop.example/never-called' });
    await database.db.insert(deliveryAttempts).values({
      paymentUuid: uuid, stage: 'confirmed', attempt: 1, requestUrl: 'https://shop.example/never-called', responseBody: 'ok',
      responseStatus: 200, pending: 0, confirmed: 1,
    });
    expect((await paymentOf(database.db, uuid)).result).toBe('sent');
    const acts = createDeliveryActivities({ db: database.db, signer, config: { callbackAllowPrivate: false, callbackAllowHttp: false, callbackTimeoutMs: 1000 } });
    const r = await acts.deliverCallbackAttempt({ paymentUuid: uuid, stage: 'confirmed', attempt: 1, snapshot, nextTryDelayMs: 300_000 });
    expect(r).toMatchObject({ outcome: 'delivered', status: 200 });
    expect((await paymentOf(database.db, uuid)).result).toBe('done');
    expect(await database.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.paymentUuid, uuid))).toHaveLength(1);
  } finally {
    await database.drop();
  }
});
