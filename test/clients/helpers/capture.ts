import crypto from 'node:crypto';
import { performAttempt } from '../../../src/callbacks/attempt';
import { loadSigner } from '../../../src/callbacks/signer';
import type { CallbackEvent, CallbackSnapshot } from '../../../src/callbacks/types';
import { btcSnapshot, ethSnapshot, solSnapshot } from '../../callbacks/fixtures/payload';
import { startReceiver, type Recorded } from '../../callbacks/helpers/receiver';

export const newKeyPem = () => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
export const publicOf = (privatePem: string) => crypto.createPublicKey(privatePem).export({ type: 'spki', format: 'pem' }) as string;

export interface Captured {
  transport: 'get' | 'form' | 'json';
  event: CallbackEvent;
  request: Recorded;
}

/** The merchant's own query: pairs in a deliberate order, escapes that must reach the verifier untouched. */
export const MERCHANT_PATH = '/shop/cb%20hook?order=A-17&z=1&a=%41&note=caf%C3%A9';

/**
 * Real callbacks: the gateway's signer (a key generated now) and its delivery code send every transport
 * and event to a real HTTP receiver on 127.0.0.1, which records the bytes as they arrived.
 */
export async function captureCallbacks(): Promise<{ publicPem: string; captured: Captured[] }> {
  const privatePem = newKeyPem();
  const signer = loadSigner({ dataDir: '/nonexistent', signingKeyFile: undefined, signingKeyPem: privatePem });
  const receiver = await startReceiver();
  const captured: Captured[] = [];
  const plan: Array<[Captured['transport'], number, number, CallbackSnapshot]> = [
    ['get', 0, 0, btcSnapshot],
    ['form', 1, 0, solSnapshot],
    ['json', 1, 1, ethSnapshot],
  ];
  try {
    for (const [transport, post, json, snapshot] of plan) {
      for (const event of ['pending', 'confirmed'] as const) {
        const outcome = await performAttempt({
          target: { url: receiver.url(`${MERCHANT_PATH}#fragment`), post, json, convert: 1 }, snapshot, event, signer,
          policy: { allowPrivate: true, allowHttp: true }, timeoutMs: 5000,
        });
        if (outcome.outcome !== 'delivered') throw new Error(`capture ${transport}/${event}: ${outcome.error}`);
        captured.push({ transport, event, request: receiver.requests[receiver.requests.length - 1] });
      }
    }
  } finally {
    await receiver.close();
  }
  return { publicPem: publicOf(privatePem), captured };
}
