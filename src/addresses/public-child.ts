import { createHmac } from 'node:crypto';
import { BIP32Factory } from 'bip32';
import { getBytes, keccak256 } from 'ethers';
import { createKeccak, type IHasher } from 'hash-wasm';
import { addTweakTimesG, pointCompress, publicDerivationEcc } from '../chains/secp256k1';

const bip32 = BIP32Factory(publicDerivationEcc);

/** 2^31: the first hardened index, which public derivation cannot reach. */
const HARDENED = 0x8000_0000;

/**
 * BIP32's public child derivation (CKDpub) of one extended public key, for the API's runs of deposit
 * addresses: the same keys as bip32's `derive(i).publicKey`, without what that call does besides per child
 * (the index and every derived point checked by valibot and isPoint, the parent's fingerprint hashed in JS,
 * a child node built) and with the HMAC-SHA512 in OpenSSL instead of JavaScript. Public material only.
 */
export class PublicChildDeriver {
  private readonly uncompressed: Uint8Array;
  private readonly chainCode: Uint8Array;
  private readonly data = Buffer.alloc(37);

  constructor(xpub: string, ...path: number[]) {
    let node = bip32.fromBase58(xpub);
    for (const i of path) node = node.derive(i);
    if (!node.isNeutered()) throw new Error('PublicChildDeriver takes an extended public key');
    this.uncompressed = pointCompress(node.publicKey, false);
    this.chainCode = Uint8Array.from(node.chainCode);
    // serP(K) ‖ ser32(i): the parent's compressed key, then each child's index.
    this.data.set(node.publicKey, 0);
  }

  /** The public key of child `index` (0 ≤ index < 2^31), compressed (33 bytes) unless asked for the 65 bytes. */
  child(index: number, compressed = true): Uint8Array {
    if (!Number.isInteger(index) || index < 0 || index >= HARDENED) throw new RangeError(`derivation index out of range: ${index}`);
    // BIP32: where IL ≥ n or the sum is the point at infinity (odds ~2^-127), the key is that of the next
    // index, as bip32's derive gives it.
    for (let i = index; i < HARDENED; i++) {
      this.data.writeUInt32BE(i, 33);
      const il = createHmac('sha512', this.chainCode).update(this.data).digest().subarray(0, 32);
      if (!publicDerivationEcc.isPrivate(il)) continue;
      const key = addTweakTimesG(this.uncompressed, il, compressed);
      if (key) return key;
    }
    throw new RangeError(`no public child key at or after ${index}`);
  }
}

let wasmKeccak: IHasher | undefined;
/**
 * Settles once hash-wasm's keccak-256 (WebAssembly, several times cheaper than ethers' JavaScript one:
 * docs/decisions/0011-public-child-derivation.md) is compiled, a moment after this module loads; until then,
 * or should it not load, ethers' serves. The same digests either way (test/chains/public-child.test.ts checks both).
 */
export const keccakReady: Promise<void> = createKeccak(256).then(
  (hasher) => void (wasmKeccak = hasher),
  () => undefined,
);

/** Whether keccak-256 runs in WebAssembly yet (keccakReady). */
export const keccakInWasm = (): boolean => wasmKeccak !== undefined;

/** keccak-256 of `data`. The WebAssembly hasher is reused: each call runs through on this thread before another starts. */
function keccak(data: Uint8Array): Uint8Array {
  return wasmKeccak ? wasmKeccak.init().update(data).digest('binary') : getBytes(keccak256(data));
}

/**
 * ethers' keccak-256 in this process (every getAddress of an RPC answer or the watcher's blocks, every
 * transaction's signing digest and hash) through the same WebAssembly, by ethers' own keccak256.register.
 * False, with ethers' JavaScript kept, when the WebAssembly did not load or ethers' hash is locked.
 * test/chains/public-child.test.ts checks digests, addresses and signed transactions either way.
 */
export async function ethersKeccakInWasm(): Promise<boolean> {
  await keccakReady;
  if (!wasmKeccak) return false;
  try {
    // `keccak` takes its WebAssembly branch from here on (the hasher, once set, stays): no loop back into ethers.
    keccak256.register(keccak);
    return true;
  } catch {
    return false;
  }
}

/**
 * The EIP-55 address of an uncompressed secp256k1 public key (65 bytes): the last 20 bytes of the keccak-256
 * of the point, letters upper-cased where the keccak of the lower-case hex has a nibble ≥ 8; what ethers'
 * computeAddress gives, with both hashes done on bytes.
 */
export function evmAddressOfPublicKey(uncompressed: Uint8Array): string {
  if (uncompressed.length !== 65 || uncompressed[0] !== 4) throw new TypeError('expected a 65-byte uncompressed public key');
  const hex = Buffer.from(keccak(uncompressed.subarray(1)).subarray(12)).toString('hex');
  const mask = keccak(Buffer.from(hex, 'ascii'));
  let out = '0x';
  for (let k = 0; k < 40; k++) {
    const nibble = k % 2 === 0 ? mask[k >> 1] >> 4 : mask[k >> 1] & 0x0f;
    out += nibble >= 8 ? hex[k].toUpperCase() : hex[k];
  }
  return out;
}
