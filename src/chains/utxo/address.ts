import { address as btcAddress, crypto as btcCrypto, opcodes, payments, script as btcScript } from 'bitcoinjs-lib';
import bs58check from 'bs58check';
import { decodeCashAddress, encodeCashAddress } from 'ecashaddrjs';
import * as ecc from 'tiny-secp256k1';
import type { BIP32Interface } from 'bip32';
import type { ChainMode } from '../config';
import { derivationPath, type HdSeed } from '../keys';
import { utxoNetwork, type UtxoNetwork } from './networks';

/** What an address pays to, independent of its text encoding. */
export type UtxoDestination =
  | { type: 'p2pkh'; hash: Uint8Array }
  | { type: 'p2sh'; hash: Uint8Array }
  | { type: 'p2sh32'; hash: Uint8Array }
  | { type: 'p2wpkh'; hash: Uint8Array }
  | { type: 'p2wsh'; hash: Uint8Array }
  | { type: 'p2tr'; hash: Uint8Array };

const equalBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);
const fromHex = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));

function decodeBase58(net: UtxoNetwork, text: string): UtxoDestination | undefined {
  let payload: Uint8Array;
  try {
    payload = bs58check.decode(text);
  } catch {
    return undefined;
  }
  for (const [prefix, type] of [[net.pubKeyHashPrefix, 'p2pkh'], [net.scriptHashPrefix, 'p2sh']] as const) {
    if (payload.length === prefix.length + 20 && equalBytes(payload.subarray(0, prefix.length), prefix)) {
      return { type, hash: payload.slice(prefix.length) };
    }
  }
  return undefined;
}

function decodeSegwit(net: UtxoNetwork, text: string): UtxoDestination | undefined {
  let d: ReturnType<typeof btcAddress.fromBech32>;
  try {
    // Checks the checksum and that v0 uses bech32 and v1+ bech32m (BIP350).
    d = btcAddress.fromBech32(text);
  } catch {
    return undefined;
  }
  if (d.prefix !== net.bech32) return undefined;
  if (d.version === 0 && d.data.length === 20) return { type: 'p2wpkh', hash: d.data };
  if (d.version === 0 && d.data.length === 32) return { type: 'p2wsh', hash: d.data };
  if (d.version === 1 && d.data.length === 32 && ecc.isXOnlyPoint(d.data)) return { type: 'p2tr', hash: d.data };
  // Future witness versions are anyone-can-spend today: never a payout destination.
  return undefined;
}

function decodeCash(net: UtxoNetwork, text: string): UtxoDestination | undefined {
  // A prefixless CashAddr is read with this network's prefix only (never guessed across networks).
  const full = text.includes(':') ? text : `${text === text.toUpperCase() ? net.cashAddrPrefix!.toUpperCase() : net.cashAddrPrefix}:${text}`;
  let d: ReturnType<typeof decodeCashAddress>;
  try {
    d = decodeCashAddress(full);
  } catch {
    return undefined;
  }
  if (d.prefix !== net.cashAddrPrefix) return undefined;
  const hash = fromHex(d.hash);
  if (d.type === 'p2pkh' && hash.length === 20) return { type: 'p2pkh', hash };
  if (d.type === 'p2sh' && hash.length === 20) return { type: 'p2sh', hash };
  if (d.type === 'p2sh' && hash.length === 32) return { type: 'p2sh32', hash };
  return undefined;
}

/** Decodes an address of this network; undefined when it is not one (wrong network, checksum, shape). */
export function decodeUtxoAddress(net: UtxoNetwork, text: string): UtxoDestination | undefined {
  if (typeof text !== 'string' || text.length === 0 || text.length > 130 || text.trim() !== text) return undefined;
  if (net.cashAddrPrefix) return decodeCash(net, text);
  return decodeBase58(net, text) ?? (net.segwit ? decodeSegwit(net, text) : undefined);
}

/**
 * The one spelling of a valid address that address_in uses: bech32 and CashAddr lower case, CashAddr
 * with its prefix; base58 is case-sensitive and stays as it is. Throws for an invalid address.
 */
export function canonicalUtxoAddress(net: UtxoNetwork, text: string): string {
  if (!decodeUtxoAddress(net, text)) throw new Error(`not a ${net.coin} ${net.mode} address`);
  if (net.cashAddrPrefix) return (text.includes(':') ? text : `${net.cashAddrPrefix}:${text}`).toLowerCase();
  if (net.segwit && text.toLowerCase().startsWith(`${net.bech32}1`)) return text.toLowerCase();
  return text;
}

export function validateUtxoAddress(net: UtxoNetwork, text: string): boolean {
  return decodeUtxoAddress(net, text) !== undefined;
}

/** The scriptPubKey an address pays to; throws for an address that is not valid on this network. */
export function utxoOutputScript(net: UtxoNetwork, text: string): Uint8Array {
  const d = decodeUtxoAddress(net, text);
  if (!d) throw new Error(`not a ${net.coin} ${net.mode} address`);
  switch (d.type) {
    case 'p2pkh':
      return payments.p2pkh({ hash: d.hash }).output!;
    case 'p2sh':
      return payments.p2sh({ hash: d.hash }).output!;
    case 'p2sh32':
      return btcScript.compile([opcodes.OP_HASH256, d.hash, opcodes.OP_EQUAL]);
    case 'p2wpkh':
      return payments.p2wpkh({ hash: d.hash }).output!;
    case 'p2wsh':
      return payments.p2wsh({ hash: d.hash }).output!;
    case 'p2tr':
      return btcScript.compile([opcodes.OP_1, d.hash]);
  }
}

/** The deposit address of a compressed public key: P2WPKH for segwit coins, P2PKH otherwise. */
export function utxoAddressOfPubkey(net: UtxoNetwork, publicKey: Uint8Array): string {
  if (net.segwit) return payments.p2wpkh({ pubkey: publicKey, network: net }).address!;
  const hash = btcCrypto.hash160(publicKey);
  if (net.cashAddrPrefix) return encodeCashAddress(net.cashAddrPrefix, 'p2pkh', hash);
  const payload = new Uint8Array(net.pubKeyHashPrefix.length + hash.length);
  payload.set(net.pubKeyHashPrefix, 0);
  payload.set(hash, net.pubKeyHashPrefix.length);
  return bs58check.encode(payload);
}

export interface UtxoKey {
  network: UtxoNetwork;
  path: string;
  /** The BIP32 node: `privateKey`, `publicKey` (compressed), `sign`. Never log it. */
  node: BIP32Interface;
  publicKey: Uint8Array;
  address: string;
  /** The scriptPubKey of `address` (P2WPKH or P2PKH). */
  outputScript: Uint8Array;
}

/** Key material of address_in index i of a UTXO network (BIP84 for btc/ltc, BIP44 otherwise). */
export function deriveUtxoKey(seed: HdSeed, networkId: string, mode: ChainMode, index: bigint): UtxoKey {
  const network = utxoNetwork(networkId, mode);
  const path = derivationPath(networkId, index);
  const node = seed.secp256k1(path);
  const publicKey = Uint8Array.from(node.publicKey);
  const address = utxoAddressOfPubkey(network, publicKey);
  return { network, path, node, publicKey, address, outputScript: utxoOutputScript(network, address) };
}
