/**
 * The customer of a wallet-less local node (btcd, bchd): one key generated at run time, paid by every mined
 * block. A payment spends the customer's unspent outputs (found with the node's address index, checked with
 * gettxout, coinbases only once mature) into the amount plus change back to the customer, signed here:
 * P2PKH with SIGHASH_ALL|FORKID for Bitcoin Cash (src/chains/utxo/forkid.ts), P2WPKH for Bitcoin.
 * Test keys only: never a key of the gateway's seed.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { Psbt } from 'bitcoinjs-lib';
import { ECPairFactory, type ECPairInterface } from 'ecpair';
import * as ecc from 'tiny-secp256k1';
import { canonicalUtxoAddress, utxoAddressOfPubkey, utxoOutputScript } from '../src/chains/utxo/address';
import { utxoNetwork, type UtxoNetwork } from '../src/chains/utxo/networks';
import { BitcoinRpc, RpcError, toSats } from '../src/chains/utxo/rpc';

const ECPair = ECPairFactory(ecc);
const COINBASE_MATURITY = 100;
/** sat per (v)byte: twice the nodes' 1 sat/B relay floor. */
const FEE_RATE = 2n;

export interface CustomerKey {
  network: 'bitcoin' | 'bitcoincash';
  address: string;
  /** Hex of the 32-byte test key (kept 0600 beside the chain it owns). */
  secret: string;
}

interface Coin {
  txid: string;
  vout: number;
  amount: bigint;
}

const netOf = (k: Pick<CustomerKey, 'network'>): UtxoNetwork => utxoNetwork(k.network, 'regtest');
const pairOf = (k: CustomerKey): ECPairInterface => ECPair.fromPrivateKey(Buffer.from(k.secret, 'hex'), { network: netOf(k) });

/** The key in `file`, or a new random one written there (0600). */
export function loadOrCreateCustomer(file: string, network: CustomerKey['network']): CustomerKey {
  const secret = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : randomBytes(32).toString('hex');
  if (!fs.existsSync(file)) fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  const pair = ECPair.fromPrivateKey(Buffer.from(secret, 'hex'));
  return { network, secret, address: utxoAddressOfPubkey(netOf({ network }), Uint8Array.from(pair.publicKey)) };
}

/** A fresh address nobody here spends from (a payout address for trying a payment). */
export function randomAddress(network: CustomerKey['network']): string {
  return utxoAddressOfPubkey(netOf({ network }), Uint8Array.from(ECPair.makeRandom().publicKey));
}

interface SearchedTx {
  txid: string;
  vout: { n: number; scriptPubKey: { addresses?: string[]; address?: string } }[];
}

/** Every transaction touching `address`, oldest first, through the node's address index (btcd, bchd). */
export async function* transactionsOf(rpc: BitcoinRpc, address: string, page = 500): AsyncGenerator<SearchedTx> {
  for (let skip = 0; ; skip += page) {
    let txs: SearchedTx[];
    try {
      txs = await rpc.call<SearchedTx[]>('searchrawtransactions', [address, 1, skip, page]);
    } catch (e) {
      // "No Txns available": past the last one.
      if (e instanceof RpcError && e.code === -5) return;
      throw e;
    }
    yield* txs;
    if (txs.length < page) return;
  }
}

/** Whether a vout pays `address` (the node may print a CashAddr without its prefix). */
function paysTo(net: UtxoNetwork, v: SearchedTx['vout'][number], address: string): boolean {
  const listed = v.scriptPubKey.address ? [v.scriptPubKey.address] : (v.scriptPubKey.addresses ?? []);
  return listed.some((a) => {
    try {
      return canonicalUtxoAddress(net, a) === address;
    } catch {
      return false;
    }
  });
}

/** Sum received by `address` (all outputs ever paid to it, mempool included). */
export async function receivedBy(rpc: BitcoinRpc, network: CustomerKey['network'], address: string): Promise<bigint> {
  const net = netOf({ network });
  const want = canonicalUtxoAddress(net, address);
  let sum = 0n;
  for await (const tx of transactionsOf(rpc, want)) {
    for (const v of tx.vout) if (paysTo(net, v, want)) sum += toSats((v as unknown as { value: string }).value);
  }
  return sum;
}

/** Unspent, spendable outputs of the customer until they cover `need`. */
async function selectCoins(rpc: BitcoinRpc, k: CustomerKey, need: (count: number) => bigint): Promise<Coin[]> {
  const net = netOf(k);
  const coins: Coin[] = [];
  let total = 0n;
  for await (const tx of transactionsOf(rpc, k.address)) {
    for (const v of tx.vout) {
      if (!paysTo(net, v, k.address)) continue;
      const out = await rpc.call<{ value: string; confirmations: number; coinbase: boolean } | null>('gettxout', [tx.txid, v.n, true]);
      if (!out || (out.coinbase && out.confirmations < COINBASE_MATURITY)) continue;
      coins.push({ txid: tx.txid, vout: v.n, amount: toSats(out.value) });
      total += toSats(out.value);
      if (total >= need(coins.length)) return coins;
    }
  }
  throw new Error(`the local ${k.network} customer has ${total} sat spendable, less than the payment needs (mine more blocks)`);
}

/** Size of the payment transaction in (v)bytes: P2PKH inputs for bch, P2WPKH for btc; two outputs. */
const sizeOf = (net: UtxoNetwork, inputs: number) => (net.segwit ? 11n + 68n * BigInt(inputs) + 2n * 31n : 10n + 148n * BigInt(inputs) + 2n * 34n);

function signBch(net: UtxoNetwork, pair: ECPairInterface, from: Uint8Array, coins: Coin[], outputs: [Uint8Array, bigint][]): string {
  // @bitgo/utxo-lib loads with the first payment signed, not with every start of the local chains (npm start).
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { script: bitgoScript } = require('@bitgo/utxo-lib') as typeof import('@bitgo/utxo-lib');
  const { BCH_SIGHASH_ALL, emptyForwardTx, forwardDigest } = require('../src/chains/utxo/forkid') as typeof import('../src/chains/utxo/forkid');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const tx = emptyForwardTx(net);
  for (const c of coins) tx.addInput(Buffer.from(c.txid, 'hex').reverse(), c.vout, 0xffffffff);
  for (const [script, value] of outputs) tx.addOutput(Buffer.from(script), value);
  const scripts = coins.map((c, i) => {
    const sig = pair.sign(Buffer.from(forwardDigest(tx, i, from, c.amount, BCH_SIGHASH_ALL)), true);
    return bitgoScript.compile([bitgoScript.signature.encode(Buffer.from(sig), BCH_SIGHASH_ALL), Buffer.from(pair.publicKey)]);
  });
  scripts.forEach((s, i) => tx.setInputScript(i, s));
  return tx.toHex();
}

function signBtc(net: UtxoNetwork, pair: ECPairInterface, from: Uint8Array, coins: Coin[], outputs: [Uint8Array, bigint][]): string {
  const psbt = new Psbt({ network: net });
  for (const c of coins) psbt.addInput({ hash: c.txid, index: c.vout, witnessUtxo: { script: from, value: c.amount } });
  for (const [script, value] of outputs) psbt.addOutput({ script, value });
  psbt.signAllInputs(pair);
  psbt.finalizeAllInputs();
  return psbt.extractTransaction().toHex();
}

/** The customer pays `amount` base units to `to`; resolves to the txid once the node has accepted it. */
export async function customerPay(rpc: BitcoinRpc, k: CustomerKey, to: string, amount: bigint): Promise<string> {
  const net = netOf(k);
  const pair = pairOf(k);
  const from = utxoOutputScript(net, k.address);
  const coins = await selectCoins(rpc, k, (n) => amount + FEE_RATE * sizeOf(net, n));
  const fee = FEE_RATE * sizeOf(net, coins.length);
  const change = coins.reduce((s, c) => s + c.amount, 0n) - amount - fee;
  const outputs: [Uint8Array, bigint][] = [[utxoOutputScript(net, to), amount]];
  if (change >= 1000n) outputs.push([from, change]);
  const raw = net.coin === 'bch' ? signBch(net, pair, from, coins, outputs) : signBtc(net, pair, from, coins, outputs);
  return rpc.call<string>('sendrawtransaction', [raw]);
}
