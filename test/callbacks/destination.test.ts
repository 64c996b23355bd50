import crypto from 'node:crypto';
import { performAttempt } from '../../src/callbacks/attempt';
import { checkDestination, UnsafeDestinationError } from '../../src/callbacks/destination';
import { classifyAddress } from '../../src/callbacks/ip-ranges';
import { loadSigner } from '../../src/callbacks/signer';
import { btcSnapshot } from './fixtures/payload';
import { startReceiver } from './helpers/receiver';

const signer = loadSigner({
  dataDir: '/nonexistent',
  signingKeyFile: undefined,
  signingKeyPem: crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
});
const strict = { allowPrivate: false, allowHttp: true };
const local = { allowPrivate: true, allowHttp: true };

const classes: Array<[string, string]> = [
  ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'], ['10.1.2.3', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'],
  ['172.32.0.1', 'public'], ['192.168.0.10', 'private'], ['169.254.169.254', 'link-local'], ['100.64.0.1', 'cgnat'], ['100.127.255.254', 'cgnat'],
  ['100.128.0.1', 'public'], ['0.0.0.0', 'unspecified'], ['224.0.0.1', 'multicast'], ['255.255.255.255', 'reserved'], ['8.8.8.8', 'public'],
  ['::1', 'loopback'], ['::', 'unspecified'], ['fc00::1', 'unique-local'], ['fdff:ffff::1', 'unique-local'], ['fe80::1', 'link-local'],
  ['ff02::1', 'multicast'], ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::ffff:169.254.169.254', 'link-local'],
  ['::ffff:8.8.8.8', 'public'], ['::127.0.0.1', 'loopback'], ['64:ff9b::10.0.0.1', 'private'], ['2002:7f00:1::', 'loopback'],
  ['2001:db8::1', 'reserved'], ['2606:4700:4700::1111', 'public'], ['fe80::1%eth0', 'link-local'],
];

describe('address classes', () => {
  it.each(classes)('%s is %s', (ip, cls) => expect(classifyAddress(ip)).toBe(cls));
});

describe('destination safety (CALLBACK_ALLOW_PRIVATE off)', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());
  afterEach(() => expect(receiver.requests).toHaveLength(0));

  const hosts = ['127.0.0.1', '10.0.0.1', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '[::1]', '[fc00::1]', '[::ffff:127.0.0.1]', 'localhost'];
  it.each(hosts)('refuses %s and sends nothing', async (host) => {
    const url = `http://${host}:${receiver.port}/cb?order=1`;
    const r = await performAttempt({ target: { url, post: 1, json: 1, convert: 0 }, snapshot: btcSnapshot, event: 'confirmed', signer, policy: strict, timeoutMs: 2000 });
    expect(r.outcome).toBe('unsafe');
    expect(r.error).toMatch(/^unsafe destination: /);
    expect(r.status).toBeNull();
  });

  it('refuses a name whose answers mix a public and an internal address (no partial trust)', async () => {
    const resolve = async () => [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }];
    await expect(checkDestination('https://shop.example/cb', strict, resolve)).rejects.toBeInstanceOf(UnsafeDestinationError);
  });

  it('refuses http:// unless allowed and URLs with credentials', async () => {
    await expect(checkDestination('http://shop.example/cb', { allowPrivate: false, allowHttp: false }, async () => [{ address: '93.184.216.34', family: 4 }])).rejects.toThrow(/scheme http:/);
    await expect(checkDestination('https://u:p@shop.example/cb', strict, async () => [{ address: '93.184.216.34', family: 4 }])).rejects.toThrow(/credentials/);
  });

  it('a DNS failure is an ordinary failed attempt, not a stop', async () => {
    const resolve = async () => {
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    };
    const r = await performAttempt({ target: { url: 'https://nowhere.invalid/cb', post: 0, json: 0, convert: 0 }, snapshot: btcSnapshot, event: 'pending', signer, policy: strict, timeoutMs: 2000, resolve });
    expect(r).toMatchObject({ outcome: 'failed', status: null });
    expect(r.error).toMatch(/ENOTFOUND/);
  });
});

describe('connection to the checked address (CALLBACK_ALLOW_PRIVATE on)', () => {
  it('connects to the address that was checked with the original Host header; no second lookup', async () => {
    const receiver = await startReceiver();
    let lookups = 0;
    // merchant.test exists only in this resolver: a second (system) lookup could not reach the listener.
    const resolve = async () => {
      lookups++;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const r = await performAttempt({ target: { url: `http://Merchant.Test:${receiver.port}/cb`, post: 1, json: 1, convert: 0 }, snapshot: btcSnapshot, event: 'confirmed', signer, policy: local, timeoutMs: 2000, resolve });
    await receiver.close();
    expect(r.outcome).toBe('delivered');
    expect(lookups).toBe(1);
    expect(receiver.requests[0].headers.host).toBe(`merchant.test:${receiver.port}`);
  });

  it('delivers to an IPv6 literal ([::1]) with the bracketed Host header', async () => {
    const http = await import('node:http');
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(String(req.headers.host));
      res.writeHead(200).end('ok');
    });
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(0, '::1', () => resolve(true));
    });
    if (!listening) return; // no IPv6 loopback on this machine
    const port = (server.address() as { port: number }).port;
    const r = await performAttempt({ target: { url: `http://[::1]:${port}/cb`, post: 0, json: 0, convert: 0 }, snapshot: btcSnapshot, event: 'confirmed', signer, policy: local, timeoutMs: 2000 });
    server.close();
    expect(r.outcome).toBe('delivered');
    expect(seen).toEqual([`[::1]:${port}`]);
  });

  it('follows no redirect: a 302 to another listener is a failed attempt and the target gets nothing', async () => {
    const target = await startReceiver();
    const redirector = await startReceiver(() => ({ status: 302, headers: { location: target.url('/stolen') } }));
    const r = await performAttempt({ target: { url: redirector.url('/cb'), post: 0, json: 0, convert: 0 }, snapshot: btcSnapshot, event: 'confirmed', signer, policy: local, timeoutMs: 2000 });
    await Promise.all([target.close(), redirector.close()]);
    expect(r).toMatchObject({ outcome: 'failed', status: 302 });
    expect(redirector.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });

  it.each([201, 202, 204, 301, 400, 404, 500, 503])('HTTP %i is a failure, whatever the body says', async (status) => {
    const receiver = await startReceiver(() => ({ status, body: 'ok' }));
    const r = await performAttempt({ target: { url: receiver.url(), post: 0, json: 0, convert: 0 }, snapshot: btcSnapshot, event: 'confirmed', signer, policy: local, timeoutMs: 2000 });
    await receiver.close();
    expect(r).toMatchObject({ outcome: 'failed', status });
  });

  it('a refused connection and a timeout are failures', async () => {
    const closed = await startReceiver();
    await closed.close();
    const refused = await performAttempt({ target: { url: closed.url(), post: 0, json: 0, convert: 0 }, snapshot: btcSnapshot, event: 'confirmed', signer, policy: local, timeoutMs: 2000 });
    expect(refused.outcome).toBe('failed');
    expect(refused.error).toMatch(/ECONNREFUSED/);
    const slow = await startReceiver(() => new Promise((r) => setTimeout(() => r({ status: 200 }), 1500)));
    const timedOut = await performAttempt({ target: { url: slow.url(), post: 0, json: 0, convert: 0 }, snapshot: btcSnapshot, event: 'confirmed', signer, policy: local, timeoutMs: 300 });
    await slow.close();
    expect(timedOut.outcome).toBe('failed');
    expect(timedOut.error).toMatch(/timed out after 300 ms/);
  });

  it('a large response body is stored truncated to 4 KiB', async () => {
    const receiver = await startReceiver(() => ({ status: 200, body: 'x'.repeat(100_000) }));
    const r = await performAttempt({ target: { url: receiver.url(), post: 0, json: 0, convert: 0 }, snapshot: btcSnapshot, event: 'confirmed', signer, policy: local, timeoutMs: 2000 });
    await receiver.close();
    expect(r.outcome).toBe('delivered');
    expect(r.body).toHaveLength(4096);
  });
});
