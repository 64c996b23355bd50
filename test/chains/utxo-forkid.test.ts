/**
 * Bitcoin Cash (SIGHASH_FORKID) and Zcash (v4, ZIP 243) forwards. No BCH or ZEC node runs here, so:
 * published digest vectors checked against the digest the signer uses, and forwards built by
 * prepareForward whose signatures verify against that digest and whose bytes parse back.
 */
import { createHash } from 'node:crypto';
import { script as bscript } from '@bitgo/utxo-lib';
import * as ecc from 'tiny-secp256k1';
import { deriveUtxoKey, utxoNetwork } from '../../src/chains/addresses';
import { InsufficientAmountError, type ForwardRequest, type ObservedDeposit } from '../../src/chains/adapter';
import { UtxoAdapter } from '../../src/chains/utxo/adapter';
import {
  BCH_SIGHASH_ALL,
  SAPLING_VERSION_GROUP_ID,
  ZEC_SIGHASH_ALL,
  forwardDigest,
  parseForward,
  signForkIdSpend,
  zcashBranchId,
  zip317Fee,
} from '../../src/chains/utxo/forkid';
import { RpcError } from '../../src/chains/utxo/rpc';
import { testSeed } from '../helpers/nodes';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
/** Node display order (uint256::GetHex) of a digest. */
const display = (b: Uint8Array) => Buffer.from(b).reverse().toString('hex');

describe('BCH FORKID digest: published vectors', () => {
  // Bitcoin Cash Node, src/test/data/sighash.json ("raw_transaction, script, input_index, hashType,
  // signature_hash (regular), …"), read from the mirror github.com/BitcoinCash1/Bitcoin-Cash-Node
  // @ e98de4f. "regular" is SignatureHash(scriptCode, tx, nIn, hashType, Amount::zero()) with
  // SCRIPT_ENABLE_SIGHASH_FORKID: for these hash types (0x40 set) the BIP143-style FORKID digest.
  const vectors: [string, string, number, number, string][] = [
    [
      '6c0bee9202d795a423d90901ff974cf4fea317c0b6719e8509fcc36cf15d7abdebdb262fba0200000001abffffffffee5cfedd7660df72da377f7f2c59888c799b8ba1883b141c616fcba2cbfc3200000000000352acabf8bc854e0156f47c020000000008516365655252516aa9640c36',
      '51', 1, -1644732552, '7561f4464e85ff8e4775da3b7529a283cf813476eced8ce0ea0f38a70561256b',
    ],
    [
      'f26ee13003ed504a82b674c3dc2b072bcb5869056004283bd0057b73505aa56873acefbf1c02000000026563ffffffff7424a77ed18e0328c8003778eac9f6980c4521ccf68754ff4ea1757829d2ba8e020000000963acac6aab0053ab510531e203a6224cd94afc103cb368c786d3330750305c4e3b3638317c8b6ace873dcbd2d20200000008516aac526aababac7c0850400298bb6200000000000151c748a501000000000265ab00000000',
      'ab51006a5352', 0, 1174186177, '50b75f605e4068bcb803f3d15fbcb5cd97bd8f479d3fd41bf45d9f8828bc3e9a',
    ],
  ];
  const net = utxoNetwork('bitcoincash', 'mainnet');

  test.each(vectors)('vector %#', (raw, script, index, hashType, expected) => {
    expect(hashType & 0x40).toBe(0x40);
    const tx = parseForward(net, raw);
    expect(display(forwardDigest(tx, index, Buffer.from(script, 'hex'), 0n, hashType >>> 0))).toBe(expected);
  });
});

describe('ZEC ZIP 243 digest: published vector', () => {
  // ZIP 243, "Test vector 3" (https://zips.z.cash/zip-0243): a transparent-only v4 transaction,
  // branch id 0x76b809bb (Sapling), amount 50000000, SIGHASH_ALL, sighash f3148f80…585b.
  const raw =
    '0400008085202f8901a8c685478265f4c14dada651969c45a65e1aeb8cd6791f2f5bb6a1d9952104d9010000006b483045022100a61e5d557568c2ddc1d9b03a7173c6ce7c996c4daecab007ac8f34bee01e6b9702204d38fdc0bcf2728a69fde78462a10fb45a9baa27873e6a5fc45fb5c76764202a01210365ffea3efa3908918a8b8627724af852fc9b86d7375b103ab0543cf418bcaa7ffeffffff02005a6202000000001976a9148132712c3ff19f3a151234616777420a6d7ef22688ac8b959800000000001976a9145453e4698f02a38abdaa521cd1ff2dee6fac187188ac29b0040048b004000000000000000000000000';
  const scriptCode = Buffer.from('76a914507173527b4c3318a2aecd793bf1cfed705950cf88ac', 'hex');

  test('matches the published sighash, and the vector transaction’s own signature verifies against it', () => {
    const tx = parseForward(utxoNetwork('zcash', 'mainnet'), raw) as ReturnType<typeof parseForward> & { consensusBranchId: number };
    tx.consensusBranchId = 0x76b809bb;
    const digest = forwardDigest(tx, 0, scriptCode, 50_000_000n, ZEC_SIGHASH_ALL);
    expect(hex(digest)).toBe('f3148f80dfab5e573d5edfe7a850f5fd39234f80b5429d3a57edcc11e34c585b');
    const [sig, pub] = bscript.decompile(tx.ins[0].script) as Buffer[];
    expect(ecc.verify(digest, pub, bscript.signature.decode(sig).signature)).toBe(true);
  });
});

/** A UtxoAdapter whose node cannot estimate fees (the fallback rate applies); no RPC leaves the process. */
function offlineAdapter(network: string) {
  const adapter = new UtxoAdapter({ network, mode: 'mainnet', rpcUrl: 'http://127.0.0.1:9/', seed: testSeed(), fallbackFeeRate: 3n });
  const calls: string[] = [];
  jest.spyOn(adapter.rpc, 'call').mockImplementation(async (method: string) => {
    calls.push(method);
    throw new RpcError(method, -32601, 'Method not found');
  });
  return { adapter, calls };
}

function request(adapter: UtxoAdapter, ticker: string, amount: bigint, extra: Partial<ForwardRequest> = {}): ForwardRequest {
  const deposit: ObservedDeposit = {
    network: adapter.network, ticker, txid: 'a8c685478265f4c14dada651969c45a65e1aeb8cd6791f2f5bb6a1d9952104d9', index: 1,
    recipient: adapter.deriveAddressIn(7n), amount, blockNumber: 100n, blockHash: '00'.repeat(32),
  };
  return { deposit, derivationIndex: 7n, addressOut: adapter.deriveAddressIn(8n), priority: 'default', ...extra };
}

describe.each([
  ['bitcoincash', 'bch', BCH_SIGHASH_ALL],
  ['zcash', 'zec', ZEC_SIGHASH_ALL],
])('%s prepareForward', (network, ticker, hashType) => {
  const amount = 2_000_000n;

  test('signs a forward whose signature verifies, that parses back, deterministically', async () => {
    const { adapter, calls } = offlineAdapter(network);
    const treasury = adapter.deriveAddressIn(9n);
    const req = request(adapter, ticker, amount, { commission: 20_000n, treasuryAddress: treasury });
    const plan = await adapter.prepareForward(req);
    // The dialect probe (src/chains/utxo/dialect.ts), the relay policy, the fee estimate, and the node asked
    // whether it takes the commission output: no previous transaction is fetched.
    expect(calls).toEqual(['version', 'getnetworkinfo', 'getmempoolinfo', 'estimatesmartfee', 'testmempoolaccept']);
    expect(await adapter.prepareForward(req)).toEqual(plan);
    expect(plan.txs).toHaveLength(1);
    expect(plan.txidOut).toBe(plan.txs[0].txid);

    const net = utxoNetwork(network, 'mainnet');
    const tx = parseForward(net, plan.txs[0].raw);
    expect(tx.toHex()).toBe(plan.txs[0].raw);
    expect(tx.getId()).toBe(plan.txidOut);
    expect(tx.ins).toHaveLength(1);
    expect(display(tx.ins[0].hash)).toBe(req.deposit.txid);
    expect(tx.ins[0].index).toBe(1);
    const key = deriveUtxoKey(adapter['opts'].seed, network, 'mainnet', 7n);
    const out = deriveUtxoKey(adapter['opts'].seed, network, 'mainnet', 8n);
    expect(tx.outs.map((o) => [hex(o.script), o.value])).toEqual([
      [hex(out.outputScript), amount - plan.networkFee - 20_000n],
      [hex(deriveUtxoKey(adapter['opts'].seed, network, 'mainnet', 9n).outputScript), 20_000n],
    ]);
    expect(plan.forwarded).toBe(amount - plan.networkFee - 20_000n);
    // The fee at 3 sat/byte for the signed size (never below ZIP 317's for zec), at most 2 bytes above it: a
    // signature shorter than the one the fee was set for (signAtCoveringFee; the oscillation test below). With
    // this test's key drawn per run, about 1 run in 130 meets that case, where an exact fee was expected.
    const feeFor = (size: number) => {
      const byRate = 3n * BigInt(size);
      const floor = ticker === 'zec' ? zip317Fee(1, 2) : 0n;
      return byRate > floor ? byRate : floor;
    };
    expect(plan.networkFee).toBeGreaterThanOrEqual(feeFor(tx.byteLength()));
    expect(plan.networkFee).toBeLessThanOrEqual(feeFor(tx.byteLength() + 2));

    const [sig, pub] = bscript.decompile(tx.ins[0].script) as Buffer[];
    expect(hex(pub)).toBe(hex(key.publicKey));
    const decoded = bscript.signature.decode(sig);
    expect(decoded.hashType).toBe(hashType);
    const digest = forwardDigest(tx, 0, key.outputScript, amount, hashType);
    expect(ecc.verify(digest, pub, decoded.signature)).toBe(true);
    // The digest commits to the spent amount (BIP143 / ZIP 243): another amount does not verify.
    expect(ecc.verify(forwardDigest(tx, 0, key.outputScript, amount + 1n, hashType), pub, decoded.signature)).toBe(false);
    if (ticker === 'bch') {
      // Replay protection: the same transaction's digest without the fork id does not verify.
      expect(ecc.verify(forwardDigest(tx, 0, key.outputScript, amount, 0x01), pub, decoded.signature)).toBe(false);
    }
    const estimate = await adapter.estimateForwardCost(ticker, 'default');
    expect(estimate.networkFee).toBeGreaterThan(0n);
  });

  test('an output below dust is refused', async () => {
    const { adapter } = offlineAdapter(network);
    await expect(adapter.prepareForward(request(adapter, ticker, 1_000n))).rejects.toThrow(InsufficientAmountError);
  });
});

describe('zcash v4 specifics', () => {
  test('overwintered v4, Sapling version group, no expiry, the current branch id in the signed digest', async () => {
    const { adapter } = offlineAdapter('zcash');
    const plan = await adapter.prepareForward(request(adapter, 'zec', 1_000_000n));
    const net = utxoNetwork('zcash', 'mainnet');
    const tx = parseForward(net, plan.txs[0].raw) as ReturnType<typeof parseForward> & {
      overwintered: number; versionGroupId: number; expiryHeight: number; consensusBranchId: number;
    };
    expect(plan.txs[0].raw.slice(0, 16)).toBe('0400008085202f89'); // header 0x80000004, group 0x892f2085
    expect([tx.version, tx.overwintered, tx.versionGroupId, tx.expiryHeight, tx.locktime]).toEqual([4, 1, SAPLING_VERSION_GROUP_ID, 0, 0]);
    expect(plan.networkFee).toBe(zip317Fee(1, 1));
    // v4 does not serialise the branch id: the signature proves which one was used.
    const branch = zcashBranchId(net);
    expect(tx.consensusBranchId).toBe(branch);
    const key = deriveUtxoKey(adapter['opts'].seed, 'zcash', 'mainnet', 7n);
    const [sig, pub] = bscript.decompile(tx.ins[0].script) as Buffer[];
    const signature = bscript.signature.decode(sig).signature;
    expect(ecc.verify(forwardDigest(tx, 0, key.outputScript, 1_000_000n, ZEC_SIGHASH_ALL), pub, signature)).toBe(true);
    tx.consensusBranchId = 0xc8e71055; // NU6: a different upgrade's digest
    expect(ecc.verify(forwardDigest(tx, 0, key.outputScript, 1_000_000n, ZEC_SIGHASH_ALL), pub, signature)).toBe(false);
    tx.consensusBranchId = branch;
    tx.expiryHeight = 3_000_000; // expiry is committed to as well
    expect(ecc.verify(forwardDigest(tx, 0, key.outputScript, 1_000_000n, ZEC_SIGHASH_ALL), pub, signature)).toBe(false);
  });
});

describe('the forward fee against the signed size', () => {
  // A signature's DER length depends on the signed bytes, the fee among them: for some deposits the fee of
  // one size signs one byte longer and the fee of that size one byte shorter, for ever. Such a forward used to
  // fail every retry ("fee did not converge"): a bch deposit on the local chain stayed unforwarded.
  test.each([['bitcoincash'], ['zcash']])('%s: every forward is signed, its fee covering its size at the rate by at most two bytes more', (network) => {
    const seed = testSeed();
    const key = deriveUtxoKey(seed, network, 'mainnet', 7n);
    const addressOut = deriveUtxoKey(seed, network, 'mainnet', 8n).address;
    const floor = network === 'zcash' ? zip317Fee(1, 1) : 0n;
    const rate = network === 'zcash' ? 1n : 3n;
    // About 3 in 400 bch deposits meet the oscillation, depending on the key (generated per run): 400 at
    // least, and on until one has met it (bch) so that its path is always covered, 4,000 at most.
    let overpaid = 0;
    for (let i = 0; i < 400 || (network === 'bitcoincash' && overpaid === 0 && i < 4_000); i++) {
      const txid = createHash('sha256').update(`deposit ${i}`).digest('hex');
      const amount = 2_000_000n + BigInt(i);
      const s = signForkIdSpend({ key, outpoint: { txid, vout: i % 3, amount }, addressOut, feeRate: rate, commission: 0n, dust: 546n });
      const size = BigInt(parseForward(key.network, s.raw).byteLength());
      const exact = rate * size > floor ? rate * size : floor;
      expect(s.fee).toBeGreaterThanOrEqual(exact);
      expect(s.fee - exact).toBeLessThanOrEqual(2n * rate);
      expect(s.forwarded).toBe(amount - s.fee);
      if (s.fee !== exact) overpaid++;
    }
    // bch's rate is above zec's floor: some of its forwards met the oscillation (none can at zec's floor).
    if (network === 'bitcoincash') expect(overpaid).toBeGreaterThan(0);
  });
});
