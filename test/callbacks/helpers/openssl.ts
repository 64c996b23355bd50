import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canonicalBytes, hostnameOf } from '../../../src/callbacks/canonical';
import { verifyCallback } from '../../../src/callbacks/verify';
import type { Recorded } from './receiver';

export type Edit = Partial<{ url: string; host: string; body: Buffer; ts: string }>;

/** The merchant's view: the canonical bytes rebuilt from what arrived on the socket (optionally tampered). */
export function rebuiltCanonical(r: Recorded, edit: Edit = {}): Buffer {
  return canonicalBytes({
    timestamp: edit.ts ?? String(r.headers['x-gateway-timestamp']),
    method: r.method,
    host: edit.host ?? hostnameOf(String(r.headers.host)),
    target: edit.url ?? r.url,
    body: edit.body ?? r.rawBody,
  });
}

/** `openssl dgst -sha256 -verify pub.pem -signature sig.bin canonical.bin`: true on "Verified OK". */
export function opensslVerifies(publicPem: string, signatureB64: string, canonical: Buffer): boolean {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-openssl-'));
  try {
    fs.writeFileSync(path.join(dir, 'pub.pem'), publicPem);
    fs.writeFileSync(path.join(dir, 'sig.bin'), Buffer.from(signatureB64, 'base64'));
    fs.writeFileSync(path.join(dir, 'canonical.bin'), canonical);
    const r = spawnSync('openssl', ['dgst', '-sha256', '-verify', 'pub.pem', '-signature', 'sig.bin', 'canonical.bin'], { cwd: dir });
    return r.status === 0 && r.stdout.toString().includes('Verified OK');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A request that arrived verifies against publicPem twice over: with the gateway's verifier and with openssl. */
export function expectSignatureVerifies(r: Recorded, publicPem: string): void {
  expect(verifyCallback({ method: r.method, url: r.url, headers: r.headers, rawBody: r.rawBody }, publicPem).ok).toBe(true);
  expect(opensslVerifies(publicPem, String(r.headers['x-gateway-signature']), rebuiltCanonical(r))).toBe(true);
}
