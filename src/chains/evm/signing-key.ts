import { hexlify, getBytes, Signature, SigningKey, Wallet, type BytesLike, type Provider } from 'ethers';
import { publicKeyOf, signRecoverable } from '../secp256k1';

/**
 * ethers' SigningKey with its two costly operations done by libsecp256k1 (src/chains/secp256k1.ts): the
 * public key, computed once here (ethers computes it in pure JS at every read, and a Wallet reads it when it
 * is made), and the signature (pure JS in ethers). Both answer exactly as ethers does (RFC 6979 nonce, low s;
 * test/chains/evm-signing-key.test.ts compares them); a forward's bytes and txid do not depend on which signed.
 */
export class NativeSigningKey extends SigningKey {
  readonly #publicKey: string;
  readonly #secret: Uint8Array;

  constructor(privateKey: Uint8Array) {
    super(hexlify(privateKey));
    this.#secret = Uint8Array.from(privateKey);
    this.#publicKey = hexlify(publicKeyOf(this.#secret, false));
  }

  override get publicKey(): string {
    return this.#publicKey;
  }

  override sign(digest: BytesLike): Signature {
    const { signature, recid } = signRecoverable(getBytes(digest, 'digest'), this.#secret);
    return Signature.from({ r: hexlify(signature.subarray(0, 32)), s: hexlify(signature.subarray(32, 64)), v: 27 + recid });
  }
}

/** An ethers Wallet of a private key that signs through NativeSigningKey. Never log it. */
export function nativeWallet(privateKey: Uint8Array, provider?: Provider | null): Wallet {
  return new Wallet(new NativeSigningKey(privateKey), provider);
}
