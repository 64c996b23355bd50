import { randomBytes, randomInt } from 'node:crypto';
import { BIP32Factory } from 'bip32';
import { computeAddress, getAddress, hexlify, keccak256, Transaction, Wallet } from 'ethers';
import * as tiny from 'tiny-secp256k1';
import { ethersKeccakInWasm, evmAddressOfPublicKey, PublicChildDeriver } from '../../src/addresses/public-child';
import * as secp from '../../src/chains/secp256k1';
import { pointCompress, publicDerivationEcc } from '../../src/chains/secp256k1';

/**
 * The API's lean public derivation (src/addresses/public-child.ts) gives bip32's keys and ethers' addresses on
 * random keys made here, at random indexes and at both ends of the range.
 */
const bip32 = BIP32Factory(tiny);
const randomAccount = () => bip32.fromSeed(randomBytes(64)).derivePath(`m/44'/${randomInt(1000)}'/0'`).neutered();

describe('PublicChildDeriver', () => {
  afterEach(() => jest.restoreAllMocks());

  it('gives bip32\'s child public keys of random xpubs, at random indexes and both ends of the range', () => {
    for (let a = 0; a < 20; a++) {
      const account = randomAccount();
      const external = account.derive(0);
      const lean = new PublicChildDeriver(account.toBase58(), 0);
      for (const i of [0, 1, 2 ** 31 - 1, ...Array.from({ length: 40 }, () => randomInt(2 ** 31))]) {
        const key = external.derive(i).publicKey;
        expect(Buffer.from(lean.child(i))).toEqual(Buffer.from(key));
        if (i % 4 === 0) expect(Buffer.from(lean.child(i, false))).toEqual(Buffer.from(tiny.pointCompress(key, false)));
      }
    }
  });

  it('refuses an index outside [0, 2^31) and an extended private key', () => {
    const account = randomAccount();
    const lean = new PublicChildDeriver(account.toBase58());
    for (const i of [-1, 2 ** 31, 1.5, Number.NaN]) expect(() => lean.child(i)).toThrow(RangeError);
    expect(() => new PublicChildDeriver(bip32.fromSeed(randomBytes(64)).toBase58())).toThrow(/extended public key/);
  });

  it('where IL is not below the order or the sum is at infinity, gives the next index\'s key (BIP32)', () => {
    const account = randomAccount();
    const lean = new PublicChildDeriver(account.toBase58());
    const next = Buffer.from(account.derive(8).publicKey);
    jest.spyOn(publicDerivationEcc, 'isPrivate').mockReturnValueOnce(false);
    expect(Buffer.from(lean.child(7))).toEqual(next);
    jest.spyOn(secp, 'addTweakTimesG').mockReturnValueOnce(null);
    expect(Buffer.from(lean.child(7))).toEqual(next);
  });
});

describe('evmAddressOfPublicKey', () => {
  const randomKeys = (n: number) => Array.from({ length: n }, () => tiny.pointFromScalar(randomBytes(32), true)!);
  const ethersAddress = (compressed: Uint8Array) => computeAddress(`0x${Buffer.from(compressed).toString('hex')}`);

  it('gives ethers\' EIP-55 address of random keys, with ethers\' keccak before the WebAssembly one is ready and with it after', async () => {
    // A fresh copy of the module: its WebAssembly keccak compiles in the background, so the first calls run without it.
    let fresh!: typeof import('../../src/addresses/public-child');
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh module instance, which an import cannot give
      fresh = require('../../src/addresses/public-child');
    });
    expect(fresh.keccakInWasm()).toBe(false);
    for (const key of randomKeys(50)) expect(fresh.evmAddressOfPublicKey(pointCompress(key, false))).toBe(ethersAddress(key));
    expect(fresh.keccakInWasm()).toBe(false);
    await fresh.keccakReady;
    expect(fresh.keccakInWasm()).toBe(true);
    for (const key of randomKeys(500)) expect(fresh.evmAddressOfPublicKey(pointCompress(key, false))).toBe(ethersAddress(key));
  });

  it('refuses a key that is not 65 uncompressed bytes', () => {
    const compressed = tiny.pointFromScalar(randomBytes(32), true)!;
    expect(() => evmAddressOfPublicKey(compressed)).toThrow(TypeError);
    expect(() => evmAddressOfPublicKey(new Uint8Array(65))).toThrow(TypeError);
  });
});

describe('ethersKeccakInWasm', () => {
  // ethers' own JavaScript keccak back for the rest of the file.
  afterAll(() => keccak256.register(keccak256._));

  it("gives ethers' digests, checksummed addresses and signed transactions, at the sponge's block edges too", async () => {
    const data = [0, 1, 31, 32, 135, 136, 137, 271, 272, 1000, ...Array.from({ length: 40 }, () => randomInt(2000))].map((n) => randomBytes(n));
    const wallet = new Wallet(hexlify(randomBytes(32)));
    const addresses = Array.from({ length: 50 }, () => hexlify(randomBytes(20)));
    const txs = Array.from({ length: 10 }, (_, k) => ({ type: 2, chainId: 1 + k, nonce: randomInt(1000), to: addresses[k], value: BigInt(randomInt(2 ** 40)), gasLimit: 21000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, data: hexlify(randomBytes(k * 20)) }));
    const all = async () => ({
      digests: data.map((d) => keccak256(d)),
      addresses: addresses.map((a) => getAddress(a)),
      signed: await Promise.all(txs.map(async (t) => { const raw = await wallet.signTransaction(t); return [raw, Transaction.from(raw).hash, Transaction.from(raw).from]; })),
    });
    const before = await all();
    expect(before.digests).toEqual(data.map((d) => hexlify(keccak256._(d))));
    expect(await ethersKeccakInWasm()).toBe(true);
    const after = await all();
    expect(after).toEqual(before);
    expect(after.signed.every(([, , from]) => from === wallet.address)).toBe(true);
  });
});
