import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performAttempt } from '../../src/callbacks/attempt';
import { DEFAULT_KEY_FILE, loadSigner, SigningError } from '../../src/callbacks/signer';
import { verifyCallback } from '../../src/callbacks/verify';
import { btcSnapshot } from './fixtures/payload';
import { opensslVerifies, rebuiltCanonical as rebuilt, type Edit } from './helpers/openssl';
import { startReceiver, type Recorded } from './helpers/receiver';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-sign-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const pemKey = () => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

describe('signer key sources', () => {
  it('generates one RSA key into DATA_DIR with mode 0600 and reuses it', async () => {
    const dataDir = path.join(tmp, 'data');
    const a = loadSigner({ dataDir, signingKeyFile: undefined, signingKeyPem: undefined });
    const file = path.join(dataDir, DEFAULT_KEY_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const b = loadSigner({ dataDir, signingKeyFile: undefined, signingKeyPem: undefined });
    expect(await a.publicKeyPem()).toBe(await b.publicKeyPem());
    expect(await a.publicKeyPem()).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(fs.readdirSync(dataDir)).toEqual([DEFAULT_KEY_FILE]);
  });

  it('SIGNING_KEY_PEM (also with literal \\n) signs verifiably', async () => {
    const pem = pemKey();
    const s = loadSigner({ dataDir: tmp, signingKeyFile: undefined, signingKeyPem: pem.replace(/\n/g, '\\n') });
    const bytes = Buffer.from('v1\n1\nGET\nh\n/\n');
    const sig = await s.sign(bytes);
    expect(crypto.verify('sha256', bytes, (await s.publicKeyPem())!, Buffer.from(sig, 'base64'))).toBe(true);
  });

  it('SIGNING_KEY_FILE is read live: a rotated file shows at once; a missing one is "not configured"', async () => {
    const file = path.join(tmp, 'rotating.pem');
    fs.writeFileSync(file, pemKey());
    const s = loadSigner({ dataDir: tmp, signingKeyFile: file, signingKeyPem: undefined });
    const first = await s.publicKeyPem();
    fs.writeFileSync(file, pemKey());
    const second = await s.publicKeyPem();
    expect(second).not.toBe(first);
    fs.rmSync(file);
    expect(await s.publicKeyPem()).toBeUndefined();
    await expect(s.sign(Buffer.from('x'))).rejects.toBeInstanceOf(SigningError);
  });

  it('a broken key fails signing without putting key material in the error', async () => {
    const secret = `${pemKey().slice(0, 300)}\n-----END PRIVATE KEY-----\n`;
    const s = loadSigner({ dataDir: tmp, signingKeyFile: undefined, signingKeyPem: secret });
    const err = await s.sign(Buffer.from('x')).catch((e: Error) => e);
    expect(err).toBeInstanceOf(SigningError);
    expect(String((err as Error).message)).not.toMatch(/BEGIN|PRIVATE|MII/);
    expect(await s.publicKeyPem()).toBeUndefined();
  });

  it('a signing failure sends no request and counts as a failed attempt', async () => {
    const receiver = await startReceiver();
    const broken = { sign: () => Promise.reject(new SigningError('no signing key configured')), publicKeyPem: async () => undefined };
    const r = await performAttempt({
      target: { url: receiver.url(), post: 1, json: 1, convert: 0 }, snapshot: btcSnapshot, event: 'confirmed', signer: broken,
      policy: { allowPrivate: true, allowHttp: true }, timeoutMs: 2000,
    });
    await receiver.close();
    expect(r.outcome).toBe('failed');
    expect(r.error).toMatch(/signing failed/);
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('signed requests verify with verifyCallback and openssl (SPEC 5)', () => {
  const signer = loadSigner({ dataDir: tmp, signingKeyFile: undefined, signingKeyPem: pemKey() });
  let publicPem: string;
  const received: Recorded[] = [];
  beforeAll(async () => {
    publicPem = (await signer.publicKeyPem())!;
    const receiver = await startReceiver();
    for (const [post, json] of [[0, 0], [1, 0], [1, 1]]) {
      for (const event of ['pending', 'confirmed'] as const) {
        const r = await performAttempt({
          target: { url: receiver.url('/hook/p%20a?order=7&z=1&a=%41#frag'), post, json, convert: 1 }, snapshot: btcSnapshot, event, signer,
          policy: { allowPrivate: true, allowHttp: true }, timeoutMs: 5000,
        });
        expect(r.outcome).toBe('delivered');
      }
    }
    received.push(...receiver.requests);
    await receiver.close();
  });

  it('every transport and event: verifyCallback accepts and openssl prints Verified OK', () => {
    expect(received.map((r) => r.method)).toEqual(['GET', 'GET', 'POST', 'POST', 'POST', 'POST']);
    for (const r of received) {
      expect(verifyCallback({ method: r.method, url: r.url, headers: r.headers, rawBody: r.rawBody }, publicPem)).toEqual({ ok: true, timestamp: Number(r.headers['x-gateway-timestamp']) });
      expect(opensslVerifies(publicPem, String(r.headers['x-gateway-signature']), rebuilt(r))).toBe(true);
      expect(r.url).not.toContain('frag');
      expect(r.headers['x-gateway-signature']).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    }
    expect(received[0].url.startsWith('/hook/p%20a?order=7&z=1&a=%41&uuid=')).toBe(true);
  });

  it('one changed byte, a reordered query, another host or a stale timestamp fails', () => {
    for (const r of received) {
      const sig = String(r.headers['x-gateway-signature']);
      const flipped = Buffer.from(r.rawBody.length > 0 ? r.rawBody : Buffer.from(r.url));
      flipped[flipped.length - 1] ^= 1;
      const changed = r.rawBody.length > 0 ? { body: flipped } : { url: flipped.toString() };
      const [p, q] = r.url.split('?');
      const reordered = `${p}?${q.split('&').reverse().join('&')}`;
      const tampered: Edit[] = [
        changed, { url: reordered }, { host: 'attacker.example' }, { ts: String(Number(r.headers['x-gateway-timestamp']) - 1) },
      ];
      for (const t of tampered) {
        expect(opensslVerifies(publicPem, sig, rebuilt(r, t))).toBe(false);
        const headers = { ...r.headers, ...(t.host ? { host: t.host } : {}), ...(t.ts ? { 'x-gateway-timestamp': t.ts } : {}) };
        expect(verifyCallback({ method: r.method, url: t.url ?? r.url, headers, rawBody: t.body ?? r.rawBody }, publicPem).ok).toBe(false);
      }
      const base = { method: r.method, url: r.url, headers: r.headers, rawBody: r.rawBody };
      const ts = Number(r.headers['x-gateway-timestamp']) * 1000;
      expect(verifyCallback(base, publicPem, ts + 300_000).ok).toBe(true);
      expect(verifyCallback(base, publicPem, ts + 301_000)).toEqual({ ok: false, reason: 'stale-timestamp' });
      expect(verifyCallback(base, publicPem, ts - 301_000)).toEqual({ ok: false, reason: 'stale-timestamp' });
      expect(verifyCallback({ ...base, headers: { ...r.headers, 'x-gateway-timestamp': '17e8' } }, publicPem)).toEqual({ ok: false, reason: 'bad-timestamp' });
      const { 'x-gateway-signature': _s, ...unsigned } = r.headers;
      expect(verifyCallback({ ...base, headers: unsigned }, publicPem)).toEqual({ ok: false, reason: 'missing-header' });
      const otherKey = crypto.createPublicKey(pemKey()).export({ type: 'spki', format: 'pem' }) as string;
      expect(verifyCallback(base, otherKey)).toEqual({ ok: false, reason: 'bad-signature' });
    }
  });

  it('openssl itself confirms the signature scheme is RSA-SHA256 PKCS#1 v1.5 over the exact bytes', () => {
    const r = received[4];
    const dir = fs.mkdtempSync(path.join(tmp, 'raw-'));
    fs.writeFileSync(path.join(dir, 'pub.pem'), publicPem);
    fs.writeFileSync(path.join(dir, 'sig.bin'), Buffer.from(String(r.headers['x-gateway-signature']), 'base64'));
    // Recover the DigestInfo with the public key and compare the SHA-256 inside with our own hash.
    const out = execFileSync('openssl', ['pkeyutl', '-verifyrecover', '-pubin', '-inkey', 'pub.pem', '-in', 'sig.bin', '-pkeyopt', 'rsa_padding_mode:pkcs1'], { cwd: dir });
    const digest = crypto.createHash('sha256').update(rebuilt(r)).digest();
    expect(out.subarray(out.length - 32).equals(digest)).toBe(true);
  });
});
