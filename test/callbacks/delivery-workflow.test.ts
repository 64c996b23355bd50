import crypto from 'node:crypto';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { loadSigner } from '../../src/callbacks/signer';
import { verifyCallback } from '../../src/callbacks/verify';
import type { CallbackSnapshot } from '../../src/callbacks/types';
import type { DeliveryWorkflowInput, DeliveryWorkflowResult } from '../../workflows/delivery';
import { createTestDatabase } from '../helpers/db';
import { createTimeSkippingEnv } from '../helpers/temporal';
import { btcSnapshot } from './fixtures/payload';
import { opensslVerifies, rebuiltCanonical } from './helpers/openssl';
import { startReceiver, type Recorded, type Reply } from './helpers/receiver';
import { attemptsOf, paymentOf, seedPayment } from './helpers/seed';

const MIN = 60_000;
const taskQueue = 'callbacks-delivery';
const signer = loadSigner({
  dataDir: '/nonexistent',
  signingKeyFile: undefined,
  signingKeyPem: crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
});

let env: TestWorkflowEnvironment;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let worker: Worker;
let running: Promise<void>;
let publicPem: string;
const receivers: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  [env, database] = await Promise.all([createTimeSkippingEnv(), createTestDatabase()]);
  publicPem = (await signer.publicKeyPem())!;
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: path.resolve(__dirname, 'fixtures/workflows.ts'),
    activities: createActivities({
      db: database.db,
      signer,
      config: { callbackAllowPrivate: true, callbackAllowHttp: true, callbackTimeoutMs: 5000 },
    }),
  });
  running = worker.run();
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  worker?.shutdown();
  await running;
  await env?.teardown();
  await database?.drop();
});

/** A real listener on 127.0.0.1 that stamps each request with the test server's virtual time. */
async function receiver(reply: (n: number, req: Recorded) => Reply | Promise<Reply>) {
  const r = await startReceiver(reply, () => env.currentTimeMs());
  receivers.push(r);
  return r;
}

const fieldsOf = (r: Recorded): Record<string, unknown> =>
  r.method === 'GET' ? Object.fromEntries(new URLSearchParams(r.url.split('?')[1])) : r.headers['content-type'] === 'application/json' ? JSON.parse(r.rawBody.toString()) : Object.fromEntries(new URLSearchParams(r.rawBody.toString()));

function expectVerified(r: Recorded): void {
  expect(verifyCallback({ method: r.method, url: r.url, headers: r.headers, rawBody: r.rawBody }, publicPem).ok).toBe(true);
  expect(opensslVerifies(publicPem, String(r.headers['x-gateway-signature']), rebuiltCanonical(r))).toBe(true);
}

function run(input: DeliveryWorkflowInput): Promise<DeliveryWorkflowResult> {
  return env.client.workflow.execute('deliveryWorkflow', { taskQueue, workflowId: `delivery-${input.paymentUuid}`, args: [input] });
}

describe('six-attempt delivery on the time-skipping server', () => {
  it('an always-failing receiver gets exactly six requests at 0, 5, 20, 50, 110 and 230 minutes', async () => {
    const rx = await receiver(() => ({ status: 500, body: 'down' }));
    const { uuid, snapshot } = await seedPayment(database.db, { callbackUrl: rx.url('/always-fails?order=1'), post: 1, json: 1 });
    const result = await run({ paymentUuid: uuid, confirmed: snapshot, resendWindow: '1 minute' });

    expect(result.delivered).toBe(false);
    expect(result.confirmed).toMatchObject({ state: 'exhausted', attempts: 6 });
    expect(rx.requests).toHaveLength(6);
    const t0 = rx.requests[0].at!;
    const offsets = rx.requests.map((r) => (r.at! - t0) / MIN);
    const expected = [0, 5, 20, 50, 110, 230];
    offsets.forEach((o, i) => {
      expect(o).toBeGreaterThanOrEqual(expected[i]);
      // The only extra is real time spent inside attempts (seconds).
      expect(o).toBeLessThan(expected[i] + 1);
    });
    // Retries carry the same snapshot: byte-identical bodies; only timestamp and signature change.
    for (const r of rx.requests) {
      expect(r.rawBody.equals(rx.requests[0].rawBody)).toBe(true);
      expect(r.url).toBe('/always-fails?order=1');
      expectVerified(r);
    }
    expect(fieldsOf(rx.requests[0])).toMatchObject({ uuid, result: 'sent', pending: 0 });

    const rows = await attemptsOf(database.db, uuid);
    expect(rows.map((r) => [r.stage, r.attempt, r.responseStatus, r.pending, r.confirmed])).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => ['confirmed', n, 500, n < 6 ? 1 : 0, 0]),
    );
    expect(rows.map((r) => r.responseBody)).toEqual(Array(6).fill('down'));
    expect(rows[5].nextTry).toBeNull();
    [5, 15, 30, 60, 120].forEach((m, i) => {
      const gap = rows[i].nextTry!.getTime() - rows[i].createdAt.getTime();
      expect(gap).toBeGreaterThanOrEqual(m * MIN - 5000);
      expect(gap).toBeLessThanOrEqual(m * MIN + 5000);
    });
    expect(rows[0].requestUrl).toBe(rx.url('/always-fails?order=1'));
    expect((await paymentOf(database.db, uuid)).result).toBe('sent');
  });
});
