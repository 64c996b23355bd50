/**
 * UTXO forward signing beyond the live LTC suite: fixtures for BTC (P2WPKH), DOGE (P2PKH), BCH and
 * ZEC (signed through src/chains/utxo/forkid.ts; vectors in utxo-forkid.test.ts), and the legacy P2PKH
 * path proven on a real node (litecoind accepts a P2PKH spend signed by the same code DOGE uses).
 */
import { Transaction, payments, script as bscript } from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { HdSeed } from '../../src/chains/keys';
import { deriveUtxoKey, utxoNetwork, utxoOutputScript } from '../../src/chains/addresses';
import { dustThreshold, knownDustRule, relayPolicy, worstPayoutDust } from '../../src/chains/utxo/policy';
import { InsufficientAmountError, UnsupportedOperationError } from '../../src/chains/adapter';
import { parseForward } from '../../src/chains/utxo/forkid';
import { signUtxoSpend } from '../../src/chains/utxo/forward';
import { BitcoinRpc, fromSats, toSats } from '../../src/chains/utxo/rpc';
import { startLitecoind, type LitecoindDevnet } from '../../devnet/litecoind';
import { isAlive } from '../helpers/process';
import { testSeed, tmpDir } from '../helpers/nodes';

// The public BIP39/BIP84 test mnemonic (a published vector, holds nothing).
const VECTOR = HdSeed.fromMnemonic('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const OUTPOINT = { txid: '8ac60eb9575db5b2d987e29f301b5b819ea83a5c6579d282d189cc04b8e151ef', vout: 1, amount: 1_000_000n };

describe('BTC P2WPKH (BIP84 vector key)', () => {
  const key = deriveUtxoKey(VECTOR, 'bitcoin', 'mainnet', 0n);
  const spend = { key, outpoint: OUTPOINT, addressOut: 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g', feeRate: 12n };

  test('derives the BIP84 m/84h/0h/0h/0/0 address', () => {
    expect(key.address).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
  });

  test('signs deterministically, fee = rate × vsize, and the BIP143 signature verifies', () => {
    const a = signUtxoSpend(spend);
    expect(signUtxoSpend(spend)).toEqual(a);
    const tx = Transaction.fromHex(a.raw);
    expect(a.fee).toBe(12n * BigInt(tx.virtualSize()));
    expect(tx.outs).toHaveLength(1);
    expect(tx.outs[0].value).toBe(OUTPOINT.amount - a.fee);
    expect(a.forwarded).toBe(tx.outs[0].value);
    const [sig, pub] = tx.ins[0].witness;
    expect(Buffer.from(pub).equals(Buffer.from(key.publicKey))).toBe(true);
    const scriptCode = payments.p2pkh({ pubkey: key.publicKey }).output!;
    const hash = tx.hashForWitnessV0(0, scriptCode, OUTPOINT.amount, Transaction.SIGHASH_ALL);
    expect(ecc.verify(hash, pub, bscript.signature.decode(sig).signature)).toBe(true);
  });

  test('a commission goes to the treasury; an output below dust is refused', () => {
    const withFee = signUtxoSpend({ ...spend, commission: 10_000n, treasuryAddress: spend.addressOut });
    expect(Transaction.fromHex(withFee.raw).outs.map((o) => o.value)).toEqual([OUTPOINT.amount - withFee.fee - 10_000n, 10_000n]);
    expect(() => signUtxoSpend({ ...spend, outpoint: { ...OUTPOINT, amount: 1_500n } })).toThrow(InsufficientAmountError);
  });
});

describe('DOGE P2PKH (legacy sighash over the previous transaction)', () => {
  const key = deriveUtxoKey(VECTOR, 'dogecoin', 'mainnet', 0n);
  const prev = new Transaction();
  prev.addInput(Buffer.alloc(32, 7), 0);
  prev.addOutput(key.outputScript, 5_00000000n);

  test('signs a spend whose signature verifies against the legacy sighash', () => {
    const s = signUtxoSpend({ key, outpoint: { txid: prev.getId(), vout: 0, amount: 5_00000000n }, prevTxHex: prev.toHex(), addressOut: key.address, feeRate: 1000n });
    const tx = Transaction.fromHex(s.raw);
    const [sig, pub] = bscript.decompile(tx.ins[0].script) as Uint8Array[];
    const hash = tx.hashForSignature(0, key.outputScript, Transaction.SIGHASH_ALL);
    expect(ecc.verify(hash, pub, bscript.signature.decode(sig).signature)).toBe(true);
    expect(s.fee).toBe(1000n * BigInt(tx.virtualSize()));
  });

  test("respects Dogecoin's 0.01 DOGE dust", () => {
    const spend = { key, outpoint: { txid: prev.getId(), vout: 0, amount: 1_100_000n }, prevTxHex: prev.toHex(), addressOut: key.address, feeRate: 1000n };
    expect(() => signUtxoSpend(spend)).toThrow(InsufficientAmountError);
  });
});

describe.each([
  ['bitcoincash', /^bitcoincash:q/],
  ['zcash', /^t1/],
])('%s', (network, shape) => {
  test('derives address_in and signs a forward (no UnsupportedOperationError, no previous transaction needed)', () => {
    const key = deriveUtxoKey(VECTOR, network, 'mainnet', 0n);
    expect(key.address).toMatch(shape);
    const spend = { key, outpoint: OUTPOINT, addressOut: key.address, feeRate: 1n };
    let s: ReturnType<typeof signUtxoSpend> | undefined;
    expect(() => (s = signUtxoSpend(spend))).not.toThrow(UnsupportedOperationError);
    expect(signUtxoSpend(spend)).toEqual(s);
    const tx = parseForward(key.network, s!.raw);
    expect(tx.getId()).toBe(s!.txid);
    expect(tx.outs.map((o) => o.value)).toEqual([OUTPOINT.amount - s!.fee]);
  });
});

describe('legacy P2PKH spend accepted by a real node (litecoind regtest)', () => {
  let node: LitecoindDevnet;
  beforeAll(async () => {
    node = await startLitecoind({ dir: tmpDir('gw-ltc-legacy-') });
  }, 90_000);
  afterAll(async () => {
    await node?.stop();
    if (node) expect(isAlive(node.pid)).toBe(false);
  });

  test('the DOGE code path (P2PKH, nonWitnessUtxo) signs a spend litecoind mines', async () => {
    const rpc = new BitcoinRpc(node.rpcUrl);
    const wallet = new BitcoinRpc(node.walletUrl);
    const segwitKey = deriveUtxoKey(testSeed(), 'litecoin', 'regtest', 3n);
    // The same key as a legacy address on Litecoin regtest: the non-segwit branch of the signer.
    const legacyNet = { ...utxoNetwork('litecoin', 'regtest'), segwit: false };
    const legacy = payments.p2pkh({ pubkey: segwitKey.publicKey, network: legacyNet });
    const txid = await wallet.call<string>('sendtoaddress', [legacy.address, fromSats(30_000_000n)]);
    await rpc.call('generatetoaddress', [1, node.minerAddress]);
    const prevTxHex = await rpc.call<string>('getrawtransaction', [txid, false]);
    const vout = Transaction.fromHex(prevTxHex).outs.findIndex((o) => Buffer.from(o.script).equals(Buffer.from(legacy.output!)));
    const addressOut = await wallet.call<string>('getnewaddress', ['', 'legacy']);
    const s = signUtxoSpend({
      key: { network: legacyNet, node: segwitKey.node, outputScript: legacy.output! },
      outpoint: { txid, vout, amount: 30_000_000n },
      prevTxHex,
      addressOut,
      feeRate: 20n,
    });
    expect(await rpc.call<string>('sendrawtransaction', [s.raw])).toBe(s.txid);
    await rpc.call('generatetoaddress', [1, node.minerAddress]);
    const utxos = await rpc.call<{ total_amount: string }>('scantxoutset', ['start', [`addr(${addressOut})`]]);
    expect(toSats(utxos.total_amount)).toBe(s.forwarded);
  });
});

describe('the fee covers the signed size (src/chains/utxo/signed-fee.ts)', () => {
  // Signed once at the estimate and again at the exact fee, about a fifth of these doge spends (and 1 in 200
  // segwit ones) came out a byte longer than the fee paid for: below a node's minimum relay rate at 1 sat/vB.
  test.each([['bitcoin', 1n], ['litecoin', 1n], ['dogecoin', 1000n]] as const)('%s: 400 outpoints, each at rate × size or at most 2 bytes above', (coin, rate) => {
    const key = deriveUtxoKey(VECTOR, coin, 'mainnet', 0n);
    let above = 0;
    for (let i = 0; i < 400; i++) {
      const amount = 5_00000000n + BigInt(i);
      const prev = new Transaction();
      prev.addInput(Buffer.alloc(32, i % 256), Math.floor(i / 256));
      prev.addOutput(key.outputScript, amount);
      const s = signUtxoSpend({ key, outpoint: { txid: prev.getId(), vout: 0, amount }, prevTxHex: prev.toHex(), addressOut: key.address, feeRate: rate });
      const size = BigInt(Transaction.fromHex(s.raw).virtualSize());
      expect(s.fee).toBeGreaterThanOrEqual(rate * size);
      expect(s.fee).toBeLessThanOrEqual(rate * (size + 2n));
      expect(s.forwarded + s.fee).toBe(amount);
      if (s.fee > rate * size) above++;
    }
    // Some met a signature a byte longer than the first one (the case the search is for).
    if (coin === 'dogecoin') expect(above).toBeGreaterThan(0);
  });
});

describe('dust thresholds (Core\'s GetDustThreshold, rounded up)', () => {
  const script = (network: string, address: string) => utxoOutputScript(utxoNetwork(network, 'mainnet'), address);
  it.each([
    // coin rule, output, threshold: Core's 294 / 546 at 3000 sat/kvB; litecoind 0.21 refuses below 2940 / 5460 (30 000 lit/kvB)
    ['btc', 'bitcoin', 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g', 294n],
    ['btc', 'bitcoin', '1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH', 546n],
    ['btc', 'bitcoin', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', 540n],
    ['btc', 'bitcoin', 'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr', 330n],
    ['ltc', 'litecoin', deriveUtxoKey(VECTOR, 'litecoin', 'mainnet', 0n).address, 2940n],
    ['ltc', 'litecoin', 'LVuDpNCSSj6pQ7t9Pv6d6sUkLKoqDEVUnJ', 5460n],
  ] as const)('%s %s → %s', (coin, network, address, expected) => {
    expect(dustThreshold(knownDustRule(coin), script(network, address))).toBe(expected);
  });

  it('a node\'s dust relay fee replaces the rule of the coins that have one; fixed limits stay', () => {
    expect(worstPayoutDust(knownDustRule('btc', 10_000n))).toBe(1820n);
    expect(worstPayoutDust(knownDustRule('doge', 10_000n))).toBe(1_000_000n);
    expect(relayPolicy('ltc', { relayfee: '0.00001000', mempoolminfee: '0.00005', dustrelayfee: undefined })).toEqual({ minRate: 5n, dust: { perKvB: 30_000n } });
    expect(relayPolicy('btc', {})).toEqual({ minRate: 1n, dust: { perKvB: 3000n } });
  });

  it('a commission below the treasury output\'s dust is withheld and goes to the miner; at the threshold it has its output', () => {
    const key = deriveUtxoKey(VECTOR, 'bitcoin', 'mainnet', 0n);
    const spend = { key, outpoint: OUTPOINT, addressOut: 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g', feeRate: 12n, treasuryAddress: key.address };
    const below = signUtxoSpend({ ...spend, commission: 293n });
    expect(Transaction.fromHex(below.raw).outs.map((o) => BigInt(o.value))).toEqual([below.forwarded]);
    expect(below.forwarded + below.fee).toBe(OUTPOINT.amount);
    expect(below.fee - 293n).toBe(12n * BigInt(Transaction.fromHex(below.raw).virtualSize()));
    const at = signUtxoSpend({ ...spend, commission: 294n });
    expect(Transaction.fromHex(at.raw).outs.map((o) => BigInt(o.value))).toEqual([at.forwarded, 294n]);
    expect(at.forwarded + at.fee + 294n).toBe(OUTPOINT.amount);
  });
});
