import * as tiny from 'tiny-secp256k1';
import type { TinySecp256k1Interface } from 'bip32';

/**
 * secp256k1 from libsecp256k1, the library Bitcoin Core signs with: its native binding (the `secp256k1`
 * package's prebuilt addon) when it loads, else tiny-secp256k1 (the same library in WebAssembly): the same
 * results, slower.
 * - Public derivation in the API (derived_addresses): the point arithmetic weighs on the API's CPU under a
 *   burst of creates, and is several times cheaper native (docs/decisions/0011-public-child-derivation.md).
 *   Nothing secret.
 * - The worker's EVM signatures and public keys (src/chains/evm/signing-key.ts): ethers does both in pure
 *   JS, milliseconds of the worker's one thread per forward. A private key passed here is used and not
 *   kept by this module.
 */

interface NativeSecp256k1 {
  publicKeyTweakAdd(publicKey: Uint8Array, tweak: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyConvert(publicKey: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyVerify(publicKey: Uint8Array): boolean;
  publicKeyCreate(privateKey: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyCombine(publicKeys: Uint8Array[], compressed?: boolean): Uint8Array;
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
}

function loadNative(): NativeSecp256k1 | undefined {
  if (process.env.SECP256K1_NATIVE === '0') return undefined;
  try {
    // The addon only: the package's own fallback is elliptic, slower than tiny-secp256k1.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('secp256k1/bindings') as NativeSecp256k1;
  } catch {
    return undefined;
  }
}

const native = loadNative();

/** Whether the native addon serves (tests check both paths agree). */
export const nativeSecp256k1 = native !== undefined;

/** P + t·G, or null where tiny-secp256k1 answers null (the sum is the point at infinity). */
function pointAddScalar(p: Uint8Array, tweak: Uint8Array, compressed = true): Uint8Array | null {
  if (!native) return tiny.pointAddScalar(p, tweak, compressed);
  // Callers (bip32) check the tweak is below the order first; the addon throws where tiny returns null.
  if (!tiny.isPrivate(tweak)) throw new Error('Expected Tweak');
  try {
    return native.publicKeyTweakAdd(p, tweak, compressed);
  } catch {
    return null;
  }
}

/** The addon's error for a sum at the point at infinity (secp256k1/lib/index.js, errors.PUBKEY_COMBINE). */
const COMBINE_AT_INFINITY = 'The sum of the public keys is not valid';

/**
 * P + t·G for a fixed P given uncompressed (BIP32's public child key), or null where the sum is the point at
 * infinity; t must be below the order (callers check it, as bip32 does). Natively as t·G (libsecp256k1's
 * generator multiplication) added to P, cheaper than the tweak-add's general multiplication, and P
 * uncompressed is parsed without a square root, as is the sum when asked uncompressed (an EVM key).
 */
export function addTweakTimesG(uncompressedP: Uint8Array, tweak: Uint8Array, compressed: boolean): Uint8Array | null {
  if (!tiny.isPrivate(tweak)) throw new Error('Expected Tweak');
  if (!native) return tiny.pointAddScalar(uncompressedP, tweak, compressed);
  const tG = native.publicKeyCreate(tweak, false);
  try {
    return native.publicKeyCombine([uncompressedP, tG], compressed);
  } catch (e) {
    // Only a sum at infinity is null; a P that does not parse is an error, never a skipped index.
    if (e instanceof Error && e.message === COMBINE_AT_INFINITY) return null;
    throw e;
  }
}

/** A public key in the other encoding (33-byte compressed ↔ 65-byte uncompressed). */
export function pointCompress(p: Uint8Array, compressed: boolean): Uint8Array {
  return native ? native.publicKeyConvert(p, compressed) : tiny.pointCompress(p, compressed);
}

/**
 * Whether p is a valid public key. bip32 asks it of every derived key, and the addon answers it several times
 * faster than tiny-secp256k1. The addon serves the compressed encoding only (the one bip32 uses): it would also take a
 * hybrid 65-byte encoding, which tiny-secp256k1 refuses.
 */
function isPoint(p: Uint8Array): boolean {
  if (!native || p.length !== 33 || (p[0] !== 2 && p[0] !== 3)) return tiny.isPoint(p);
  return native.publicKeyVerify(p);
}

/** tiny-secp256k1's interface for bip32, public derivation on the native path. */
export const publicDerivationEcc: TinySecp256k1Interface = { ...tiny, pointAddScalar, isPoint };

/** The public key of a private key (33-byte compressed or 65-byte uncompressed). */
export function publicKeyOf(privateKey: Uint8Array, compressed: boolean): Uint8Array {
  if (native) return native.publicKeyCreate(privateKey, compressed);
  const p = tiny.pointFromScalar(privateKey, compressed);
  if (!p) throw new Error('not a private key');
  return p;
}

/**
 * An ECDSA signature of a 32-byte digest: r‖s (64 bytes, low s) and the recovery id. The nonce is RFC 6979's,
 * as in ethers and every wallet: the same key and digest always give the same signature.
 */
export function signRecoverable(digest: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number } {
  if (native) return native.ecdsaSign(digest, privateKey);
  const s = tiny.signRecoverable(digest, privateKey);
  return { signature: s.signature, recid: s.recoveryId };
}
