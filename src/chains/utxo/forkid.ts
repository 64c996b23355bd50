/**
 * Forward signing for the two UTXO coins bitcoinjs-lib cannot sign: Bitcoin Cash and Zcash.
 * Transactions, digests and serialisation come from @bitgo/utxo-lib (BitGo's maintained fork of
 * bitcoinjs-lib with bitcoincash/zcash support); keys and RFC 6979 signing stay ours.
 *
 * - bch: version-2 legacy-format transaction, P2PKH input signed with SIGHASH_ALL|SIGHASH_FORKID
 *   (0x41) over the BIP143-style replay-protected digest (fork id 0), which commits to the amount.
 * - zec: v4 (Sapling-format, overwintered, version group 0x892f2085) transparent transaction signed
 *   over the ZIP 243 digest, personalised with the consensus branch id of the library's current
 *   upgrade for the network. Not v5: the library's ZIP 244 (v5) digest is a pre-activation draft
 *   without the amounts/scriptPubKeys commitments, so v5 signatures from it would not verify on the
 *   network; v4 is still accepted after NU5 and is the library's own default. nExpiryHeight is 0
 *   (no expiry, ZIP 203): the stored bytes stay valid until they land or the outpoint is spent, and
 *   signing needs no chain height, so the same request always gives the same bytes.
 */
import { bitgo, networks as bitgoNetworks, script as bitgoScript, type Network as BitgoNetwork } from '@bitgo/utxo-lib';
import * as ecc from 'tiny-secp256k1';
import { InsufficientAmountError } from '../adapter';
import { utxoOutputScript, type UtxoKey } from '../addresses';
import type { UtxoNetwork } from './networks';
import { signAtCoveringFee } from './signed-fee';

/** SIGHASH_ALL | SIGHASH_FORKID: the only sighash type a BCH forward uses. */
export const BCH_SIGHASH_ALL = 0x41;
export const ZEC_SIGHASH_ALL = 0x01;
/** ZIP 317 marginal fee per logical action and the grace actions: the conventional fee floor. */
const ZIP317_MARGINAL_FEE = 5_000n;
const ZIP317_GRACE_ACTIONS = 2n;

/** nVersionGroupId of v4 (Sapling) transactions. */
export const SAPLING_VERSION_GROUP_ID = 0x892f2085;

type Tx = bitgo.UtxoTransaction<bigint>;
type ZecTx = bitgo.ZcashTransaction<bigint>;

/** The library's network object for a coin in a mode (regtest uses the testnet parameters). */
export function libraryNetwork(net: UtxoNetwork): BitgoNetwork {
  if (net.coin === 'bch') return net.mode === 'mainnet' ? bitgoNetworks.bitcoincash : bitgoNetworks.bitcoincashTestnet;
  if (net.coin === 'zec') return net.mode === 'mainnet' ? bitgoNetworks.zcash : bitgoNetworks.zcashTest;
  throw new Error(`${net.coin} is signed by bitcoinjs-lib`);
}

/** The consensus branch id a zec forward commits to (the library's current upgrade for the network). */
export function zcashBranchId(net: UtxoNetwork): number {
  const lib = libraryNetwork(net) as bitgo.ZcashNetwork;
  return bitgo.getDefaultConsensusBranchIdForVersion(lib, bitgo.getDefaultTransactionVersion(lib));
}

/** ZIP 317 conventional fee of a transparent transaction: 5000 zat × max(2, max(inputs, outputs)). */
export function zip317Fee(inputs: number, outputs: number): bigint {
  const actions = BigInt(Math.max(inputs, outputs));
  return ZIP317_MARGINAL_FEE * (actions > ZIP317_GRACE_ACTIONS ? actions : ZIP317_GRACE_ACTIONS);
}

/** An unsigned transaction of the coin's forward format (no inputs, no outputs). */
export function emptyForwardTx(net: UtxoNetwork): Tx {
  const lib = libraryNetwork(net);
  if (net.coin === 'bch') {
    const tx = new bitgo.UtxoTransaction<bigint>(lib, undefined, 'bigint');
    tx.version = 2;
    return tx;
  }
  const tx = new bitgo.ZcashTransaction<bigint>(lib as bitgo.ZcashNetwork, undefined, 'bigint');
  tx.version = 4;
  tx.overwintered = 1;
  tx.versionGroupId = SAPLING_VERSION_GROUP_ID;
  tx.consensusBranchId = zcashBranchId(net);
  tx.expiryHeight = 0;
  return tx;
}

/** The digest input `index` signs: BCH FORKID (BIP143-style) or Zcash ZIP 243, per the tx's network. */
export function forwardDigest(tx: Tx, index: number, prevScript: Uint8Array, amount: bigint, hashType: number): Uint8Array {
  return Uint8Array.from(tx.hashForSignatureByNetwork(index, Buffer.from(prevScript), amount, hashType));
}

/** Parses a raw forward of this coin back (the library's parser; throws on malformed bytes). */
export function parseForward(net: UtxoNetwork, raw: string): Tx {
  const lib = libraryNetwork(net);
  const buf = Buffer.from(raw, 'hex');
  if (net.coin === 'zec') return bitgo.ZcashTransaction.fromBuffer<bigint>(buf, false, 'bigint', lib as bitgo.ZcashNetwork) as ZecTx;
  return bitgo.UtxoTransaction.fromBuffer<bigint>(buf, false, 'bigint', lib);
}

export interface ForkIdSpend {
  key: Pick<UtxoKey, 'network' | 'node' | 'outputScript'>;
  outpoint: { txid: string; vout: number; amount: bigint };
  addressOut: string;
  /** sat (zat) per byte. */
  feeRate: bigint;
  /** Withheld from the deposit; paid to the treasury only with `toTreasury` (else it goes to the miner). */
  commission: bigint;
  toTreasury?: boolean;
  treasuryAddress?: string;
  /** The payout's dust threshold. */
  dust: bigint;
}

/**
 * Signs the forward of one P2PKH outpoint: deposit − fee − commission to address_out (+ commission
 * to the treasury when `toTreasury`). fee = rate × size (zec: at least the ZIP 317 conventional fee), re-signed until
 * the fee matches the signed size. Low-R RFC 6979 signatures: the bytes depend on the inputs alone.
 */
export function signForkIdSpend(spend: ForkIdSpend): { raw: string; txid: string; forwarded: bigint; fee: bigint } {
  const net = spend.key.network;
  const { txid, vout, amount } = spend.outpoint;
  const hashType = net.coin === 'bch' ? BCH_SIGHASH_ALL : ZEC_SIGHASH_ALL;
  const toTreasury = spend.commission > 0n && spend.toTreasury !== false;
  const outputs = toTreasury ? 2 : 1;
  const floor = net.coin === 'zec' ? zip317Fee(1, outputs) : 0n;
  const payTo = Buffer.from(utxoOutputScript(net, spend.addressOut));
  const treasury = toTreasury ? Buffer.from(utxoOutputScript(net, spend.treasuryAddress!)) : undefined;
  const build = (fee: bigint) => {
    const forwarded = amount - fee - spend.commission;
    if (forwarded < spend.dust) throw new InsufficientAmountError(`deposit ${amount} leaves ${forwarded} after fee ${fee}, below dust ${spend.dust}`);
    const tx = emptyForwardTx(net);
    tx.addInput(Buffer.from(txid, 'hex').reverse(), vout, 0xffffffff);
    tx.addOutput(payTo, forwarded);
    if (treasury) tx.addOutput(treasury, spend.commission);
    const digest = forwardDigest(tx, 0, spend.key.outputScript, amount, hashType);
    const sig = spend.key.node.sign(digest, true);
    const pub = spend.key.node.publicKey;
    if (!ecc.verify(digest, pub, sig)) throw new Error('signature does not verify');
    const encoded = bitgoScript.signature.encode(Buffer.from(sig), hashType);
    tx.setInputScript(0, bitgoScript.compile([encoded, Buffer.from(pub)]));
    return { tx, forwarded };
  };
  const feeFor = (size: number) => {
    const byRate = spend.feeRate * BigInt(size);
    return byRate > floor ? byRate : floor;
  };
  // 1 input (~148 bytes signed P2PKH) + 34 bytes per output + ~10 (zec v4 adds 15 header bytes).
  const { built, fee } = signAtCoveringFee({
    first: feeFor(148 + 34 * outputs + (net.coin === 'zec' ? 25 : 10)),
    build,
    feeOf: (b) => feeFor(b.tx.byteLength()),
  });
  return { raw: built.tx.toHex(), txid: built.tx.getId(), forwarded: built.forwarded, fee };
}
