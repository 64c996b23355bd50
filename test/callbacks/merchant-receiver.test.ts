import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { performAttempt } from '../../src/callbacks/attempt';
import { loadSigner } from '../../src/callbacks/signer';
import type { CallbackEvent } from '../../src/callbacks/types';
import { createMerchantReceiver, orderReference } from '../../examples/merchant-receiver';
import { btcSnapshot } from './fixtures/payload';

/** The shop's orders by the reference in their callback URLs, as their create responses gave them. */
const ORDERS: Record<string, { addressIn: string; coin: string }> = { 'A-1': { addressIn: btcSnapshot.address_in, coin: 'btc' } };
const orderOf = (target: string) => ORDERS[orderReference(target) ?? ''];

const keyPem = () => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const signer = loadSigner({ dataDir: '/nonexistent', signingKeyFile: undefined, signingKeyPem: keyPem() });
const local = { allowPrivate: true, allowHttp: true };

async function listen(app: ReturnType<typeof createMerchantReceiver>['app']): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

describe('examples/merchant-receiver.ts', () => {
  it.each([[0, 0], [1, 0], [1, 1]])('post=%i json=%i: verifies, fulfils each confirmed UUID once and answers 200', async (post, json) => {
    const receiver = createMerchantReceiver({ publicKey: (await signer.publicKeyPem())!, orderOf });
    const { server, port } = await listen(receiver.app);
    const target = { url: `http://127.0.0.1:${port}/orders/callback?order=A-1`, post, json, convert: 1 };
    const send = (event: CallbackEvent) =>
      performAttempt({ target, snapshot: btcSnapshot, event, signer, policy: local, timeoutMs: 5000 });
    const outcomes = [await send('pending'), await send('confirmed'), await send('confirmed')];
    server.close();
    expect(outcomes.map((o) => [o.outcome, o.status])).toEqual([['delivered', 200], ['delivered', 200], ['delivered', 200]]);
    expect(receiver.received.map((r) => r.verified)).toEqual([true, true, true]);
    expect([...receiver.fulfilled.keys()]).toEqual([btcSnapshot.uuid]);
    expect(receiver.fulfilled.get(btcSnapshot.uuid)).toMatchObject({ result: 'sent', coin: 'btc', value_coin: '0.01000000' });
  });

  it('rejects a callback signed by another key and fulfils nothing; refetches a rotated key once', async () => {
    let current = (await loadSigner({ dataDir: '/nonexistent', signingKeyFile: undefined, signingKeyPem: keyPem() }).publicKeyPem())!;
    let fetches = 0;
    const receiver = createMerchantReceiver({
      publicKey: async () => {
        fetches++;
        return current;
      },
      orderOf,
    });
    const { server, port } = await listen(receiver.app);
    const target = { url: `http://127.0.0.1:${port}/cb?order=A-1`, post: 1, json: 1, convert: 0 };
    const rejected = await performAttempt({ target, snapshot: btcSnapshot, event: 'confirmed', signer, policy: local, timeoutMs: 5000 });
    expect(rejected).toMatchObject({ outcome: 'failed', status: 401 });
    expect(receiver.fulfilled.size).toBe(0);
    // The gateway's key is now the one served: the receiver's cached key fails, it refetches and accepts.
    current = (await signer.publicKeyPem())!;
    const accepted = await performAttempt({ target, snapshot: btcSnapshot, event: 'confirmed', signer, policy: local, timeoutMs: 5000 });
    server.close();
    expect(accepted).toMatchObject({ outcome: 'delivered', status: 200 });
    expect(receiver.fulfilled.size).toBe(1);
    expect(fetches).toBe(3);
  });

  it('rejects a replay with a stale timestamp', async () => {
    const receiver = createMerchantReceiver({ publicKey: (await signer.publicKeyPem())!, now: () => Date.now() + 301_000, orderOf });
    const { server, port } = await listen(receiver.app);
    const r = await performAttempt({ target: { url: `http://127.0.0.1:${port}/cb?order=A-1`, post: 1, json: 1, convert: 0 }, snapshot: btcSnapshot, event: 'confirmed', signer, policy: local, timeoutMs: 5000 });
    server.close();
    expect(r).toMatchObject({ outcome: 'failed', status: 401, body: 'rejected: stale-timestamp' });
    expect(receiver.fulfilled.size).toBe(0);
  });

  it.each([[0, 0], [1, 0], [1, 1]])(
    'post=%i json=%i: refuses a genuinely signed callback of another configuration for the order (squat, alias) and of an unknown order',
    async (post, json) => {
      const receiver = createMerchantReceiver({ publicKey: (await signer.publicKeyPem())!, orderOf });
      const { server, port } = await listen(receiver.app);
      const send = (url: string, snapshot: typeof btcSnapshot) =>
        performAttempt({ target: { url, post, json, convert: 0 }, snapshot, event: 'confirmed', signer, policy: local, timeoutMs: 5000 });
      const squat = { ...btcSnapshot, address_in: 'bc1qattackerin', address_out: 'bc1qattackerout' };
      const outcomes = [
        await send(`http://127.0.0.1:${port}/cb?order=A-1`, squat),
        await send(`http://127.0.0.1:${port}/./cb?order=A-1&#x`, squat),
        await send(`http://127.0.0.1:${port}/cb?order=A-1`, { ...btcSnapshot, coin: 'ltc' }),
        await send(`http://127.0.0.1:${port}/cb?order=B-2`, btcSnapshot),
      ];
      server.close();
      expect(outcomes.map((o) => [o.outcome, o.status, o.body])).toEqual([
        ['failed', 401, 'rejected: wrong-address-in'],
        ['failed', 401, 'rejected: wrong-address-in'],
        ['failed', 401, 'rejected: wrong-coin'],
        ['failed', 404, 'rejected: unknown order'],
      ]);
      expect(receiver.received.map((r) => [r.verified, r.refused])).toEqual([
        [true, 'wrong-address-in'], [true, 'wrong-address-in'], [true, 'wrong-coin'], [true, 'unknown order'],
      ]);
      expect(receiver.fulfilled.size).toBe(0);
    },
  );
});
