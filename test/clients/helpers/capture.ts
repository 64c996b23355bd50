import crypto from 'node:crypto';
import { performAttempt, type AttemptOutcome } from '../../../src/callbacks/attempt';
import { loadSigner, type Signer } from '../../../src/callbacks/signer';
import type { CallbackEvent, CallbackSnapshot } from '../../../src/callbacks/types';
import { btcSnapshot, ethSnapshot, solSnapshot } from '../../callbacks/fixtures/payload';
import { startReceiver, type Recorded } from '../../callbacks/helpers/receiver';

export const newKeyPem = () => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
export const publicOf = (privatePem: string) => crypto.createPublicKey(privatePem).export({ type: 'spki', format: 'pem' }) as string;
/** The gateway's real signer over a key generated now (never one from the repository). */
export const newSigner = (privatePem: string = newKeyPem()): Signer =>
  loadSigner({ dataDir: '/nonexistent', signingKeyFile: undefined, signingKeyPem: privatePem });

export type TransportName = 'get' | 'form' | 'json';

export interface Captured {
  transport: TransportName;
  event: CallbackEvent;
  /** What the gateway sent: the order's address_in and coin come from it. */
  snapshot: CallbackSnapshot;
  request: Recorded;
}

/** The merchant's own query: pairs in a deliberate order, escapes that must reach the verifier untouched. */
export const MERCHANT_PATH = '/shop/cb%20hook?order=A-17&z=1&a=%41&note=caf%C3%A9';

/** Every transport (post/json of the configuration) with a snapshot of another family, each event. */
export const PLAN: Array<{ transport: TransportName; post: number; json: number; snapshot: CallbackSnapshot; event: CallbackEvent }> = (
  [
    ['get', 0, 0, btcSnapshot],
    ['form', 1, 0, solSnapshot],
    ['json', 1, 1, ethSnapshot],
  ] as const
).flatMap(([transport, post, json, snapshot]) => (['pending', 'confirmed'] as const).map((event) => ({ transport, post, json, snapshot, event })));

/** One real delivery attempt of the gateway's code to `url` (loopback allowed, as in tests only). */
export function deliver(signer: Signer, url: string, step: (typeof PLAN)[number]): Promise<AttemptOutcome> {
  return performAttempt({
    target: { url, post: step.post, json: step.json, convert: 1 }, snapshot: step.snapshot, event: step.event, signer,
    policy: { allowPrivate: true, allowHttp: true }, timeoutMs: 10_000,
  });
}

/**
 * Real callbacks: the gateway's signer and its delivery code send every transport and event to a real HTTP
 * receiver on 127.0.0.1, which records the bytes as they arrived.
 */
export async function captureCallbacks(): Promise<{ publicPem: string; captured: Captured[] }> {
  const privatePem = newKeyPem();
  const signer = newSigner(privatePem);
  const receiver = await startReceiver();
  const captured: Captured[] = [];
  try {
    for (const step of PLAN) {
      const outcome = await deliver(signer, receiver.url(`${MERCHANT_PATH}#fragment`), step);
      if (outcome.outcome !== 'delivered') throw new Error(`capture ${step.transport}/${step.event}: ${outcome.error}`);
      captured.push({ transport: step.transport, event: step.event, snapshot: step.snapshot, request: receiver.requests[receiver.requests.length - 1] });
    }
  } finally {
    await receiver.close();
  }
  return { publicPem: publicOf(privatePem), captured };
}
