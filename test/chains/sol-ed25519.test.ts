import { randomBytes, randomInt } from 'node:crypto';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { derivePath } from 'ed25519-hd-key';
import { deriveAddressIn, deriveSolKeypair } from '../../src/chains/addresses';
import { HdSeed } from '../../src/chains/keys';
import { ed25519PublicKey, serializeVerified, slip10Ed25519, verifyEd25519 } from '../../src/chains/sol/ed25519';

/** Solana's key work in node:crypto gives what ed25519-hd-key and @solana/web3.js (noble) give. */

// SLIP-0010, test vector 1 for ed25519: seed 000102…0f, private key and public key (0x00-prefixed there) per path.
const VECTOR_1: Array<[string, string, string]> = [
  ["m/0'", '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3', '8c8a13df77a28f3445213a0f432fde644acaa215fc72dcdf300d5efaa85d350c'],
  ["m/0'/1'", 'b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2', '1932a5270f335bed617d5b935c80aedb1a35bd9fc1e31acafd5372c30f5c1187'],
  ["m/0'/1'/2'", '92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9', 'ae98736566d30ed0e9d2f4486a64bc95740d89c7db33f52121f8ea8f76ff0fc1'],
  ["m/0'/1'/2'/2'", '30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662', '8abae2d66361c879b900d204ad2cc4984fa2aa344dd7ddc46007329ac76c429c'],
  ["m/0'/1'/2'/2'/1000000000'", '8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793', '3c24da049451555d51a7014a37337aa4e12d41e485abccfa46b47dfb2af54b7a'],
];

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('SLIP-10 ed25519 and Solana keys in node:crypto', () => {
  it("gives SLIP-0010's test vector 1, keys and public keys", () => {
    const seed = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
    for (const [path, key, pub] of VECTOR_1) {
      expect([path, hex(slip10Ed25519(seed, path)), hex(Keypair.fromSeed(slip10Ed25519(seed, path)).publicKey.toBytes())]).toEqual([path, key, pub]);
    }
  });

  it("gives ed25519-hd-key's key for random seeds, at the address_in and fee payer paths and the index bounds", () => {
    for (let n = 0; n < 200; n++) {
      const seed = randomBytes(64);
      const index = [0, 2 ** 31 - 1, randomInt(2 ** 31 - 1)][n % 3];
      for (const path of [`m/44'/501'/${index}'/0'`, "m/44'/501'/0'/1'", `m/${index}'`]) {
        expect([path, hex(slip10Ed25519(seed, path))]).toEqual([path, hex(derivePath(path, seed.toString('hex')).key)]);
      }
    }
  });

  it("gives Keypair.fromSeed's public key for random private seeds, and the pool's address is the signing key's", () => {
    for (let n = 0; n < 500; n++) {
      const privateSeed = randomBytes(32);
      expect(hex(ed25519PublicKey(privateSeed))).toBe(hex(Keypair.fromSeed(privateSeed).publicKey.toBytes()));
    }
    expect(() => ed25519PublicKey(randomBytes(31))).toThrow(RangeError);
    const seed = HdSeed.fromMnemonic('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
    for (const index of [0n, 1n, 7n, 2n ** 31n - 1n]) {
      for (const mode of ['mainnet', 'regtest'] as const) {
        expect(deriveAddressIn(seed, 'solana', mode, index)).toBe(deriveSolKeypair(seed, 'solana', mode, index).address);
      }
    }
  });

  it('refuses what is not a hardened path, and an index of 2^31 or more (which ed25519-hd-key wraps round)', () => {
    const seed = randomBytes(64);
    for (const path of ['m', "m/44'/501'/0", "m/44'/x'", "44'/501'", "m/44'//0'", "m/-1'"]) {
      expect(() => slip10Ed25519(seed, path)).toThrow('Invalid derivation path');
    }
    expect(() => slip10Ed25519(seed, `m/${2 ** 31}'`)).toThrow(RangeError);
  });

  it("verifies as noble does: a transaction's signatures, a bad one and a wrong key", () => {
    for (let n = 0; n < 20; n++) {
      const a = Keypair.fromSeed(randomBytes(32));
      const b = Keypair.fromSeed(randomBytes(32));
      const tx = new Transaction({ feePayer: b.publicKey, blockhash: new PublicKey(randomBytes(32)).toBase58(), lastValidBlockHeight: 1 }).add(
        SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: new PublicKey(randomBytes(32)), lamports: randomInt(1, 2 ** 40) }),
      );
      tx.sign(b, a);
      // Same bytes as the library's own serialize, which verifies with noble.
      expect(hex(serializeVerified(tx))).toBe(hex(tx.serialize()));
      const message = tx.serializeMessage();
      const sig = tx.signatures[0].signature!;
      expect(verifyEd25519(message, sig, b.publicKey.toBytes())).toBe(true);
      expect(verifyEd25519(message, sig, a.publicKey.toBytes())).toBe(false);
      const bad = Buffer.from(sig);
      bad[randomInt(64)] ^= 1 << randomInt(8);
      expect(verifyEd25519(message, bad, b.publicKey.toBytes())).toBe(false);
      expect(verifyEd25519(message, bad.subarray(1), b.publicKey.toBytes())).toBe(false);
    }
  });

  it("refuses to serialize a transaction with an invalid or a missing signature, with the library's error", () => {
    const a = Keypair.fromSeed(randomBytes(32));
    const b = Keypair.fromSeed(randomBytes(32));
    const make = () =>
      new Transaction({ feePayer: b.publicKey, blockhash: new PublicKey(randomBytes(32)).toBase58(), lastValidBlockHeight: 1 }).add(
        SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: b.publicKey, lamports: 1000 }),
      );
    const forged = make();
    forged.sign(b, a);
    const sig = Buffer.from(forged.signatures[1].signature!);
    sig[0] ^= 1;
    forged.signatures[1].signature = sig;
    expect(() => forged.serialize()).toThrow(`Invalid signature for public key [\`${a.publicKey.toBase58()}\`]`);
    expect(() => serializeVerified(forged)).toThrow(`Signature verification failed.\nInvalid signature for public key [\`${a.publicKey.toBase58()}\`].`);
    const half = make();
    half.partialSign(b);
    expect(() => half.serialize()).toThrow(`Missing signature for public key [\`${a.publicKey.toBase58()}\`]`);
    expect(() => serializeVerified(half)).toThrow(`Signature verification failed.\nMissing signature for public key [\`${a.publicKey.toBase58()}\`].`);
  });
});
