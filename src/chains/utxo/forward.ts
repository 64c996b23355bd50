import { Psbt } from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import type { Priority } from '../../domain/assets';
import {
  InsufficientAmountError,
  InvalidRequestError,
  type ForwardPlan,
  type ForwardRequest,
} from '../adapter';
import { utxoOutputScript, type UtxoKey } from '../addresses';
import type { DialectNode } from './dialect';
import { signForkIdSpend, zip317Fee } from './forkid';
import { signAtCoveringFee } from './signed-fee';
import { toSats } from './rpc';

/** Confirmation target (blocks) of estimatesmartfee per priority. */
const TARGET: Record<Priority, number> = { fast: 2, default: 6, slow: 24 };
/** Regtest and fresh nodes cannot estimate: 20 sat/vB, the node's -fallbackfee=0.0002 per kvB. */
const FALLBACK_RATE = 20n;

/** Smallest output each coin's nodes relay (P2WPKH 294 / P2PKH 546 sat; Dogecoin's 0.01 DOGE soft dust; zec at the same conservative 546 zat). */
function dustLimit(coin: string, segwit: boolean): bigint {
  if (coin === 'doge') return 1_000_000n;
  return segwit ? 294n : 546n;
}

/** Fee rate in sat/vB for a priority, rounded up; the fallback when the node has no estimate. */
export async function feeRate(node: DialectNode, priority: Priority, fallback = FALLBACK_RATE): Promise<bigint> {
  const perKvBText = await node.feeRate(TARGET[priority]);
  if (!perKvBText) return fallback;
  const perKvB = toSats(perKvBText);
  const rate = (perKvB + 999n) / 1000n;
  return rate > 0n ? rate : 1n;
}

/** vsize of a 1-input transaction spending `segwit` P2WPKH (else P2PKH) into `outputs` outputs, rounded up. */
export function forwardVsize(segwit: boolean, outputs: number): bigint {
  return segwit ? 69n + 31n * BigInt(outputs) + 11n : 148n + 34n * BigInt(outputs) + 10n;
}

/** Estimated fee of a 1-input forward at `rate`: rate × vsize, and for zec at least the ZIP 317 conventional fee. */
export function forwardFeeEstimate(coin: string, segwit: boolean, rate: bigint, outputs = 1): bigint {
  const byRate = rate * forwardVsize(segwit, outputs);
  if (coin !== 'zec') return byRate;
  const floor = zip317Fee(1, outputs);
  return byRate > floor ? byRate : floor;
}

export interface UtxoForwardContext {
  node: DialectNode;
  network: string;
  key: UtxoKey;
  fallbackFeeRate?: bigint;
}

export interface UtxoSpend {
  key: Pick<UtxoKey, 'network' | 'node' | 'outputScript'>;
  outpoint: { txid: string; vout: number; amount: bigint };
  /** The previous transaction's hex: required for legacy (P2PKH) inputs, which sign over it. */
  prevTxHex?: string;
  addressOut: string;
  /** sat/vB. */
  feeRate: bigint;
  commission?: bigint;
  treasuryAddress?: string;
}

/**
 * Pure signing of one forward: spends exactly the outpoint into deposit − fee − commission to
 * address_out (plus the commission to the treasury), fee = rate × the signed transaction's vsize.
 * RFC 6979 signatures make the bytes a function of the inputs alone.
 */
export function signUtxoSpend(spend: UtxoSpend): { raw: string; txid: string; forwarded: bigint; fee: bigint } {
  const net = spend.key.network;
  const commission = spend.commission ?? 0n;
  if (commission > 0n && !spend.treasuryAddress) throw new InvalidRequestError('a UTXO commission needs a treasury address');
  const dust = dustLimit(net.coin, net.segwit);
  if (commission > 0n && commission < dust) throw new InsufficientAmountError(`commission ${commission} is below dust ${dust}`);
  // Bitcoin Cash (SIGHASH_FORKID) and Zcash (v4, ZIP 243): src/chains/utxo/forkid.ts.
  if (net.coin === 'bch' || net.coin === 'zec') {
    return signForkIdSpend({ ...spend, commission, dust });
  }
  const { txid, vout, amount } = spend.outpoint;
  let input;
  if (net.segwit) input = { hash: txid, index: vout, witnessUtxo: { script: spend.key.outputScript, value: amount } };
  else if (spend.prevTxHex) input = { hash: txid, index: vout, nonWitnessUtxo: Buffer.from(spend.prevTxHex, 'hex') };
  else throw new InvalidRequestError('a legacy input needs its previous transaction');
  const build = (fee: bigint) => {
    const forwarded = amount - fee - commission;
    if (forwarded < dust) throw new InsufficientAmountError(`deposit ${amount} leaves ${forwarded} after fee ${fee}, below dust ${dust}`);
    const psbt = new Psbt({ network: net });
    psbt.addInput(input);
    psbt.addOutput({ script: utxoOutputScript(net, spend.addressOut), value: forwarded });
    if (commission > 0n) psbt.addOutput({ script: utxoOutputScript(net, spend.treasuryAddress!), value: commission });
    psbt.signInput(0, spend.key.node);
    if (!psbt.validateSignaturesOfInput(0, (pub, hash, sig) => ecc.verify(hash, pub, sig))) throw new Error('signature does not verify');
    psbt.finalizeAllInputs();
    return { tx: psbt.extractTransaction(), forwarded };
  };
  // Signed at rate × the signed vsize, or a byte or two above it (src/chains/utxo/signed-fee.ts): signed once
  // at the estimate and again at the exact fee, a legacy spend's signature was one byte longer in about a
  // fifth of them (doge, 400 outpoints) and a segwit one's vsize in about 1 in 200 (btc, ltc), paying less
  // than the rate: below a node's minimum relay rate when the rate is that minimum (1 sat/vB).
  const { built, fee } = signAtCoveringFee({
    first: spend.feeRate * forwardVsize(net.segwit, commission > 0n ? 2 : 1),
    build,
    feeOf: (b) => spend.feeRate * BigInt(b.tx.virtualSize()),
  });
  return { raw: built.tx.toHex(), txid: built.tx.getId(), forwarded: built.forwarded, fee };
}

/** Reads the fee rate (and a legacy input's previous transaction) from the node, then signs. */
export async function prepareUtxoForward(ctx: UtxoForwardContext, req: ForwardRequest): Promise<ForwardPlan> {
  const rate = await feeRate(ctx.node, req.priority, ctx.fallbackFeeRate);
  const prevTxHex = ctx.key.network.segwit || ['bch', 'zec'].includes(ctx.key.network.coin) ? undefined : await ctx.node.rawTx(req.deposit.txid);
  const s = signUtxoSpend({
    key: ctx.key,
    outpoint: { txid: req.deposit.txid, vout: req.deposit.index, amount: req.deposit.amount },
    prevTxHex,
    addressOut: req.addressOut,
    feeRate: rate,
    commission: req.commission,
    treasuryAddress: req.treasuryAddress,
  });
  return {
    network: ctx.network,
    ticker: req.deposit.ticker,
    txs: [{ role: 'forward', txid: s.txid, raw: s.raw }],
    txidOut: s.txid,
    forwarded: s.forwarded,
    networkFee: s.fee,
    sponsorCost: 0n,
    rent: 0n,
  };
}
