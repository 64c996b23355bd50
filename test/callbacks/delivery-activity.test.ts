import crypto from 'node:crypto';
import { createActivities } from '../../activities';
import { loadSigner } from '../../src/callbacks/signer';
import { createTestDatabase } from '../helpers/db';
import { openPglite } from '../../src/db/client';
import { startReceiver, type Recorded, type Reply } from './helpers/receiver';
import { attemptsOf, seedPayment } from './helpers/seed';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/db/prepared';

/**
 * The delivery activities alone, against PostgreSQL and a real receiver: what a repeated or late call does.
 * (test/callbacks/delivery-workflow.test.ts runs them under the payment workflow.)
 */
const MIN = 60_000;
const signer = loadSigner({
  dataDir: '/nonexistent',
  signingKeyFile: undefined,
  signingKeyPem: crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
});

let database: Awaited<ReturnType<typeof createTestDatabase>>;
const receivers: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await database?.drop();
});

async function receiver(reply: (n: number, req: Recorded) => Reply | Promise<Reply>) {
  const r = await startReceiver(reply);
  receivers.push(r);
  return r;
}

describe('delivery activity against PostgreSQL', () => {
  it('is idempotent per (payment, stage, attempt): a repeated call sends nothing and returns the stored outcome', async () => {
    const rx = await receiver(() => ({ status: 500, body: 'x'.repeat(10_000) }));
    const { uuid, snapshot } = await seedPayment(database.db, { callbackUrl: rx.url('/idem') });
    const acts = createActivities({ db: database.db, signer, config: { callbackAllowPrivate: true, callbackAllowHttp: true, callbackTimeoutMs: 5000 } });
    const input = { paymentUuid: uuid, stage: 'confirmed' as const, attempt: 1, snapshot, nextTryDelayMs: 5 * MIN };
    const first = await acts.deliverCallbackAttempt(input);
    const again = await acts.deliverCallbackAttempt(input);
    expect(first).toMatchObject({ outcome: 'failed', status: 500 });
    expect(again).toEqual(first);
    expect(rx.requests).toHaveLength(1);
    const rows = await attemptsOf(database.db, uuid);
    expect(rows).toHaveLength(1);
    expect(rows[0].responseBody).toHaveLength(4096);
  });

  it('a delivered confirmed attempt is stored and marks its payment done at once; asked again, it sends nothing and finishes a lost step', async () => {
    const rx = await receiver(() => ({ status: 200, body: 'ok' }));
    const { uuid, snapshot } = await seedPayment(database.db, { callbackUrl: rx.url('/delivered') });
    const acts = createActivities({ db: database.db, signer, config: { callbackAllowPrivate: true, callbackAllowHttp: true, callbackTimeoutMs: 5000 } });
    const input = { paymentUuid: uuid, stage: 'confirmed' as const, attempt: 2, snapshot, nextTryDelayMs: 5 * MIN };
    const first = await acts.deliverCallbackAttempt(input);
    expect(first).toEqual({ outcome: 'delivered', status: 200, error: null, nextTry: null });
    const rows = await attemptsOf(database.db, uuid);
    expect(rows).toEqual([expect.objectContaining({ stage: 'confirmed', attempt: 2, confirmed: 1, pending: 0, nextTry: null, responseStatus: 200, responseBody: 'ok' })]);
    const resultOf = async () => rowsOf<{ result: string }>(await database.db.execute(sql`SELECT result FROM payments WHERE uuid = ${uuid}`))[0].result;
    expect(await resultOf()).toBe('done');
    // A worker lost between the two steps of the earlier code: the row stored, the payment not done.
    await database.db.execute(sql`UPDATE payments SET result = 'sent' WHERE uuid = ${uuid}`);
    expect(await acts.deliverCallbackAttempt(input)).toEqual(first);
    expect(await resultOf()).toBe('done');
    expect(rx.requests).toHaveLength(1);
    expect(await attemptsOf(database.db, uuid)).toHaveLength(1);
  });

  it('a delivered confirmed attempt is stored and its payment done on PGlite too (the embedded default)', async () => {
    const lite = await openPglite(undefined, { migrate: true });
    try {
      const rx = await receiver(() => ({ status: 200, body: 'ok' }));
      const { uuid, snapshot } = await seedPayment(lite.db, { callbackUrl: rx.url('/lite') });
      const acts = createActivities({ db: lite.db, signer, config: { callbackAllowPrivate: true, callbackAllowHttp: true, callbackTimeoutMs: 5000 } });
      const input = { paymentUuid: uuid, stage: 'confirmed' as const, attempt: 1, snapshot, nextTryDelayMs: 5 * MIN };
      expect(await acts.deliverCallbackAttempt(input)).toMatchObject({ outcome: 'delivered', status: 200 });
      expect(await acts.deliverCallbackAttempt(input)).toMatchObject({ outcome: 'delivered', status: 200 });
      expect(rx.requests).toHaveLength(1);
      expect(await attemptsOf(lite.db, uuid)).toEqual([expect.objectContaining({ confirmed: 1, pending: 0 })]);
      expect(rowsOf<{ result: string }>(await lite.db.execute(sql`SELECT result FROM payments WHERE uuid = ${uuid}`))[0].result).toBe('done');
    } finally {
      await lite.close();
    }
  });

  it('an unsafe attempt asked again is unsafe again: a refused destination, and a callback URL that does not parse', async () => {
    const acts = createActivities({ db: database.db, signer, config: { callbackAllowPrivate: false, callbackAllowHttp: true, callbackTimeoutMs: 5000 } });
    for (const callbackUrl of ['http://127.0.0.1:9/refused', 'not a url']) {
      const { uuid, snapshot } = await seedPayment(database.db, { callbackUrl });
      const input = { paymentUuid: uuid, stage: 'confirmed' as const, attempt: 1, snapshot, nextTryDelayMs: 5 * MIN };
      const first = await acts.deliverCallbackAttempt(input);
      expect(first.outcome).toBe('unsafe');
      // A worker lost after the attempt was stored: the retry must stop the stage as the first answer did.
      expect(await acts.deliverCallbackAttempt(input)).toEqual(first);
    }
  });

  it('never sends a pending attempt for a payment already past pending', async () => {
    const rx = await receiver(() => ({ status: 200 }));
    const { uuid, snapshot } = await seedPayment(database.db, { callbackUrl: rx.url('/late-pending'), result: 'sent' });
    const acts = createActivities({ db: database.db, signer, config: { callbackAllowPrivate: true, callbackAllowHttp: true, callbackTimeoutMs: 5000 } });
    const r = await acts.deliverCallbackAttempt({ paymentUuid: uuid, stage: 'pending', attempt: 1, snapshot, nextTryDelayMs: 5 * MIN });
    expect(r.outcome).toBe('skipped');
    expect(rx.requests).toHaveLength(0);
  });
});
