import { randomBytes } from 'node:crypto';
import { hexlify, SigningKey, Transaction, Wallet } from 'ethers';
import * as tiny from 'tiny-secp256k1';
import { NativeSigningKey, nativeWallet } from '../../src/chains/evm/signing-key';
import { nativeSecp256k1, publicKeyOf, signRecoverable } from '../../src/chains/secp256k1';

/**
 * The worker's EVM keys (libsecp256k1) answer exactly as ethers' own pure-JS ones: keys, signatures, signed
 * bytes. (Integration layer: it imports ethers, which the unit layer keeps out.)
 */

const privateKey = (): Uint8Array => {
  for (;;) {
    const k = randomBytes(32);
    if (tiny.isPrivate(k)) return k;
  }
};

describe('EVM signing through libsecp256k1', () => {
  it('the native addon serves, and it signs and derives as tiny-secp256k1 does', () => {
    expect(nativeSecp256k1).toBe(true);
    for (let i = 0; i < 100; i++) {
      const k = privateKey();
      const digest = randomBytes(32);
      const mine = signRecoverable(digest, k);
      const theirs = tiny.signRecoverable(digest, k);
      expect([Buffer.from(mine.signature).toString('hex'), mine.recid]).toEqual([Buffer.from(theirs.signature).toString('hex'), theirs.recoveryId]);
      expect(Buffer.from(publicKeyOf(k, false))).toEqual(Buffer.from(tiny.pointFromScalar(k, false)!));
      expect(Buffer.from(publicKeyOf(k, true))).toEqual(Buffer.from(tiny.pointFromScalar(k, true)!));
    }
  });

  it('a key signs every digest as ethers does (same r, s and v), with the same public key', () => {
    for (let i = 0; i < 100; i++) {
      const k = privateKey();
      const mine = new NativeSigningKey(k);
      const theirs = new SigningKey(hexlify(k));
      expect(mine.publicKey).toBe(theirs.publicKey);
      expect(mine.compressedPublicKey).toBe(theirs.compressedPublicKey);
      const digest = hexlify(randomBytes(32));
      expect(mine.sign(digest).serialized).toBe(theirs.sign(digest).serialized);
    }
  });

  it('a wallet has the same address and signs a forward into the same bytes; its sender recovers', async () => {
    for (let i = 0; i < 20; i++) {
      const k = privateKey();
      const tx = {
        type: 2,
        chainId: 31337n,
        to: Wallet.createRandom().address,
        value: BigInt(i + 1) * 10n ** 15n,
        data: '0x',
        gasLimit: 21_000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
        nonce: i,
      };
      const mine = nativeWallet(k);
      const theirs = new Wallet(hexlify(k));
      expect(mine.address).toBe(theirs.address);
      const raw = await mine.signTransaction(tx);
      expect(raw).toBe(await theirs.signTransaction(tx));
      expect(Transaction.from(raw).from).toBe(theirs.address);
    }
  });
});
