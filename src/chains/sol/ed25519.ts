// Solana's ed25519 key work in OpenSSL (node:crypto) instead of pure JavaScript: the SLIP-10 derivation of a
// key (ed25519-hd-key, noble's HMAC-SHA512) and the check of a transaction's signatures before it is sent
// (Transaction.serialize, noble's verify) cost milliseconds each on the forward path and in the address
// pool's refill. Same keys, same bytes: test/chains/sol-ed25519.test.ts compares them with the libraries on
// random seeds and SLIP-10's own test vectors; bench/sol-keys.ts measures both. A deposit address's public key
// comes from OpenSSL too (a JWK import of the private seed): the pool's refill derives thousands of them.
import { createHmac, createPrivateKey, createPublicKey, verify } from 'node:crypto';
import type { Transaction } from '@solana/web3.js';

const SEED_KEY = Buffer.from('ed25519 seed');
const HARDENED = 0x80000000;

/**
 * The 32-byte ed25519 private seed at a SLIP-10 path (every step hardened: m/44'/501'/0'/0'), as
 * ed25519-hd-key's derivePath gives it. An index of 2^31 or more is refused (that library wraps it round).
 */
export function slip10Ed25519(seed: Uint8Array, path: string): Buffer {
  if (!/^m(\/[0-9]+')+$/.test(path)) throw new Error('Invalid derivation path');
  let i = createHmac('sha512', SEED_KEY).update(seed).digest();
  const data = Buffer.alloc(37);
  for (const step of path.split('/').slice(1)) {
    const index = Number(step.slice(0, -1));
    if (index >= HARDENED) throw new RangeError(`SLIP-10 index out of range: ${step}`);
    i.copy(data, 1, 0, 32);
    data.writeUInt32BE(index + HARDENED, 33);
    i = createHmac('sha512', i.subarray(32)).update(data).digest();
  }
  data.fill(0);
  return i.subarray(0, 32);
}

/** A JWK `x` is required beside `d`; OpenSSL computes the public key from `d` alone and ignores it. */
const X_PLACEHOLDER = Buffer.alloc(32).toString('base64url');

/** The 32-byte ed25519 public key of a 32-byte private seed (RFC 8032), as Keypair.fromSeed gives it. */
export function ed25519PublicKey(privateSeed: Uint8Array): Buffer {
  if (privateSeed.length !== 32) throw new RangeError('an ed25519 private seed has 32 bytes');
  const d = Buffer.from(privateSeed).toString('base64url');
  const key = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d, x: X_PLACEHOLDER }, format: 'jwk' });
  return Buffer.from(createPublicKey(key).export({ format: 'jwk' }).x!, 'base64url');
}

/**
 * Whether `signature` is `publicKey`'s ed25519 signature of `message`. The key goes in as a JWK, far cheaper
 * to import than through OpenSSL's DER decoder (docs/decisions/0016-solana-keys-in-node-crypto.md).
 */
export function verifyEd25519(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' });
  return verify(null, message, key, signature);
}

/**
 * The wire bytes of a signed transaction, as Transaction.serialize() gives them: every signature must be
 * present and valid over the message, or it throws the library's error ('Signature verification failed.',
 * naming the keys whose signature is invalid or missing).
 */
export function serializeVerified(tx: Transaction): Buffer {
  const message = tx.serializeMessage();
  const invalid: string[] = [];
  const missing: string[] = [];
  for (const { signature, publicKey } of tx.signatures) {
    if (!signature) missing.push(publicKey.toBase58());
    else if (!verifyEd25519(message, signature, publicKey.toBytes())) invalid.push(publicKey.toBase58());
  }
  if (invalid.length > 0 || missing.length > 0) {
    let text = 'Signature verification failed.';
    if (invalid.length > 0) text += `\nInvalid signature for public key${invalid.length === 1 ? '' : '(s)'} [\`${invalid.join('`, `')}\`].`;
    if (missing.length > 0) text += `\nMissing signature for public key${missing.length === 1 ? '' : '(s)'} [\`${missing.join('`, `')}\`].`;
    throw new Error(text);
  }
  return tx.serialize({ verifySignatures: false });
}
