import { Psbt } from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import type { Priority } from '../../domain/assets';
import {
  InsufficientAmountError,
  InvalidRequestError,
  UnsupportedOperationError,
  type ForwardPlan,
  type ForwardRequest,
} from '../adapter';
import { utxoOutputScript, type UtxoKey } from '../addresses';
import { BitcoinRpc, RpcError, toSats } from './rpc';

/** Confirmation target (blocks) of estimatesmartfee per priority. */
const TARGET: Record<Priority, number> = { fast: 2, default: 6, slow: 24 };
/** Regtest and fresh nodes cannot estimate: 20 sat/vB, the node's -fallbackfee=0.0002 per kvB. */
const FALLBACK_RATE = 20n;

/** Smallest output each coin's nodes relay (P2WPKH 294 / P2PKH 546 sat; Dogecoin's 0.01 DOGE soft dust). */
function dustLimit(coin: string, segwit: boolean): bigint {
  if (coin === 'doge') return 1_000_000n;
  return segwit ? 294n : 546n;
}

/** Fee rate in sat/vB for a priority, rounded up; the fallback when the node has no estimate. */
export async function feeRate(rpc: BitcoinRpc, priority: Priority, fallback = FALLBACK_RATE): Promise<bigint> {
  try {
    const est = await rpc.call<{ feerate?: string; errors?: string[] }>('estimatesmartfee', [TARGET[priority]]);
    if (!est.feerate) return fallback;
    const perKvB = toSats(est.feerate);
    const rate = (perKvB + 999n) / 1000n;
    return rate > 0n ? rate : 1n;
  } catch (e) {
    if (e instanceof RpcError) return fallback;
    throw e;
  }
}

/** vsize of a 1-input transaction spending `segwit` P2WPKH (else P2PKH) into `outputs` outputs, rounded up. */
export function forwardVsize(segwit: boolean, outputs: number): bigint {
  return segwit ? 69n + 31n * BigInt(outputs) + 11n : 148n + 34n * BigInt(outputs) + 10n;
}

export interface UtxoForwardContext {
  rpc: BitcoinRpc;
  network: string;
  key: UtxoKey;
  fallbackFeeRate?: bigint;
}

/**
 * Spends exactly the deposit outpoint: one output of deposit − fee − commission to address_out, and
 * the commission to the treasury when there is one. RFC 6979 signatures make the bytes a pure function
 * of (outpoint, outputs, fee rate).
 */
export async function prepareUtxoForward(ctx: UtxoForwardContext, req: ForwardRequest): Promise<ForwardPlan> {
  const net = ctx.key.network;
  if (net.coin === 'bch') {
    throw new UnsupportedOperationError('bitcoincash forwarding needs the SIGHASH_FORKID digest, which bitcoinjs-lib does not implement');
  }
  if (net.coin === 'zec') {
    throw new UnsupportedOperationError('zcash forwarding needs the v5 transparent transaction format (ZIP 225/244), which bitcoinjs-lib does not implement');
  }
  const commission = req.commission ?? 0n;
  if (commission > 0n && !req.treasuryAddress) throw new InvalidRequestError('a UTXO commission needs a treasury address');
  const dust = dustLimit(net.coin, net.segwit);
  if (commission > 0n && commission < dust) throw new InsufficientAmountError(`commission ${commission} is below dust ${dust}`);
  const outputs = commission > 0n ? 2 : 1;
  const rate = await feeRate(ctx.rpc, req.priority, ctx.fallbackFeeRate);
  const input = await inputOf(ctx, req);
  const build = (fee: bigint) => {
    const forwarded = req.deposit.amount - fee - commission;
    if (forwarded < dust) throw new InsufficientAmountError(`deposit ${req.deposit.amount} leaves ${forwarded} after fee ${fee}, below dust ${dust}`);
    const psbt = new Psbt({ network: net });
    psbt.addInput(input);
    psbt.addOutput({ script: utxoOutputScript(net, req.addressOut), value: forwarded });
    if (commission > 0n) psbt.addOutput({ script: utxoOutputScript(net, req.treasuryAddress!), value: commission });
    psbt.signInput(0, ctx.key.node);
    psbt.validateSignaturesOfInput(0, (pub, hash, sig) => ecc.verify(hash, pub, sig));
    psbt.finalizeAllInputs();
    const tx = psbt.extractTransaction();
    return { tx, forwarded };
  };
  // Sign once to learn the exact vsize, then again at exactly rate × vsize.
  let fee = rate * forwardVsize(net.segwit, outputs);
  let built = build(fee);
  const exact = rate * BigInt(built.tx.virtualSize());
  if (exact !== fee) {
    fee = exact;
    built = build(fee);
  }
  const raw = built.tx.toHex();
  const txid = built.tx.getId();
  return {
    network: ctx.network,
    ticker: req.deposit.ticker,
    txs: [{ role: 'forward', txid, raw }],
    txidOut: txid,
    forwarded: built.forwarded,
    networkFee: fee,
    sponsorCost: 0n,
    rent: 0n,
  };
}

async function inputOf(ctx: UtxoForwardContext, req: ForwardRequest) {
  const { txid, index, amount } = req.deposit;
  if (ctx.key.network.segwit) {
    return { hash: txid, index, witnessUtxo: { script: ctx.key.outputScript, value: amount } };
  }
  // Legacy inputs sign over the whole previous transaction (needs -txindex or the wallet).
  const hex = await ctx.rpc.call<string>('getrawtransaction', [txid, false]);
  return { hash: txid, index, nonWitnessUtxo: Buffer.from(hex, 'hex') };
}
