import { Psbt, Transaction } from 'bitcoinjs-lib';
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
import type { UtxoCoin, UtxoNetwork } from './networks';
import { dustThreshold, isDustRefusal, knownDustRule, relayPolicy, type DustRule, type RelayPolicy } from './policy';
import { signAtCoveringFee } from './signed-fee';
import { toSats } from './rpc';

/**
 * Bitcoin Cash's and Zcash's signing (src/chains/utxo/forkid.ts) brings @bitgo/utxo-lib, the largest of the
 * chain libraries: loaded with the first such forward, not with every process that reads UTXO chains.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const forkid = () => require('./forkid') as typeof import('./forkid');

/** Confirmation target (blocks) of estimatesmartfee per priority. */
const TARGET: Record<Priority, number> = { fast: 2, default: 6, slow: 24 };
/** Regtest and fresh nodes cannot estimate: 20 sat/vB, the node's -fallbackfee=0.0002 per kvB. */
const FALLBACK_RATE = 20n;

/**
 * Fee rate in sat/vB for a priority, rounded up, never below the node's minimum relay rate. A missing,
 * zero or negative estimate (estimatesmartfee's `errors` answer, Dogecoin's and old Core's feerate -1) is
 * no estimate: the fallback rate, raised to the relay minimum where the node asks more.
 */
export async function feeRate(node: DialectNode, priority: Priority, policy: RelayPolicy, fallback = FALLBACK_RATE): Promise<bigint> {
  const perKvBText = await node.feeRate(TARGET[priority]);
  const perKvB = perKvBText === undefined ? 0n : toSats(perKvBText);
  const rate = perKvB > 0n ? (perKvB + 999n) / 1000n : fallback;
  return rate > policy.minRate ? rate : policy.minRate;
}

/** The node's relay policy now: src/chains/utxo/policy.ts. */
export async function nodePolicy(node: DialectNode, coin: UtxoCoin): Promise<RelayPolicy> {
  return relayPolicy(coin, await node.policy());
}

/** vsize of a 1-input transaction spending `segwit` P2WPKH (else P2PKH) into `outputs` outputs, rounded up. */
export function forwardVsize(segwit: boolean, outputs: number): bigint {
  return segwit ? 69n + 31n * BigInt(outputs) + 11n : 148n + 34n * BigInt(outputs) + 10n;
}

/** Estimated fee of a 1-input forward at `rate`: rate × vsize, and for zec at least the ZIP 317 conventional fee. */
export function forwardFeeEstimate(coin: string, segwit: boolean, rate: bigint, outputs = 1): bigint {
  const byRate = rate * forwardVsize(segwit, outputs);
  if (coin !== 'zec') return byRate;
  const floor = forkid().zip317Fee(1, outputs);
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
  /** The node's dust rule; the coin's known one when absent. */
  dust?: DustRule;
  /** The node refused the commission output as dust by a rule it does not tell: the commission goes to the miner. */
  commissionToMiner?: boolean;
}

/**
 * What the forward pays: the commission gets an output of its own only when the node would relay it;
 * below the dust threshold it is withheld all the same and goes to the miner (a commission too small to
 * move never blocks a forward).
 */
function commissionOutput(spend: UtxoSpend, rule: DustRule): bigint {
  const commission = spend.commission ?? 0n;
  if (commission <= 0n) return 0n;
  if (!spend.treasuryAddress) throw new InvalidRequestError('a UTXO commission needs a treasury address');
  if (spend.commissionToMiner) return 0n;
  return commission >= dustThreshold(rule, utxoOutputScript(spend.key.network, spend.treasuryAddress)) ? commission : 0n;
}

/**
 * Pure signing of one forward: spends exactly the outpoint into deposit − fee − commission to
 * address_out (plus the commission to the treasury when it is not dust), fee = rate × the signed
 * transaction's vsize. `fee` is everything the miner gets (a dust commission included), so
 * deposit = forwarded + fee + commission output exactly. RFC 6979 signatures make the bytes a function
 * of the inputs alone.
 */
export function signUtxoSpend(spend: UtxoSpend): { raw: string; txid: string; forwarded: bigint; fee: bigint; commissionOut: bigint } {
  const net = spend.key.network;
  const commission = spend.commission ?? 0n;
  const rule = spend.dust ?? knownDustRule(net.coin);
  const toTreasury = commissionOutput(spend, rule);
  const dust = dustThreshold(rule, utxoOutputScript(net, spend.addressOut));
  const total = (s: { raw: string; txid: string; forwarded: bigint }) => ({ ...s, fee: spend.outpoint.amount - s.forwarded - toTreasury, commissionOut: toTreasury });
  // Bitcoin Cash (SIGHASH_FORKID) and Zcash (v4, ZIP 243): src/chains/utxo/forkid.ts.
  if (net.coin === 'bch' || net.coin === 'zec') {
    return total(forkid().signForkIdSpend({ ...spend, commission, toTreasury: toTreasury > 0n, dust }));
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
    if (toTreasury > 0n) psbt.addOutput({ script: utxoOutputScript(net, spend.treasuryAddress!), value: toTreasury });
    psbt.signInput(0, spend.key.node);
    if (!psbt.validateSignaturesOfInput(0, (pub, hash, sig) => ecc.verify(hash, pub, sig))) throw new Error('signature does not verify');
    psbt.finalizeAllInputs();
    return { tx: psbt.extractTransaction(), forwarded };
  };
  // Signed at rate × the signed vsize, or a byte or two above it (src/chains/utxo/signed-fee.ts): signed once
  // at the estimate and again at the exact fee, a legacy spend's signature was one byte longer in about a
  // fifth of them (doge, 400 outpoints) and a segwit one's vsize in about 1 in 200 (btc, ltc), paying less
  // than the rate: below a node's minimum relay rate when the rate is that minimum (1 sat/vB).
  const { built } = signAtCoveringFee({
    first: spend.feeRate * forwardVsize(net.segwit, toTreasury > 0n ? 2 : 1),
    build,
    feeOf: (b) => spend.feeRate * BigInt(b.tx.virtualSize()),
  });
  return total({ raw: built.tx.toHex(), txid: built.tx.getId(), forwarded: built.forwarded });
}

/** Reads the fee rate (and a legacy input's previous transaction) from the node, then signs. */
export async function prepareUtxoForward(ctx: UtxoForwardContext, req: ForwardRequest): Promise<ForwardPlan> {
  const policy = await nodePolicy(ctx.node, ctx.key.network.coin);
  const rate = await feeRate(ctx.node, req.priority, policy, ctx.fallbackFeeRate);
  const prevTxHex = ctx.key.network.segwit || ['bch', 'zec'].includes(ctx.key.network.coin) ? undefined : await ctx.node.rawTx(req.deposit.txid);
  const spend: UtxoSpend = {
    key: ctx.key,
    outpoint: { txid: req.deposit.txid, vout: req.deposit.index, amount: req.deposit.amount },
    prevTxHex,
    addressOut: req.addressOut,
    feeRate: rate,
    commission: req.commission,
    treasuryAddress: req.treasuryAddress,
    dust: policy.dust,
  };
  let s = signUtxoSpend(spend);
  // A node may keep a dust rule it does not tell (litecoind's -dustrelayfee): asked before anything is
  // stored, its refusal of the commission output sends the commission to the miner instead.
  if (s.commissionOut > 0n) {
    const test = await ctx.node.testAccept(s.raw);
    if (test && !test.allowed && test.reason !== undefined && isDustRefusal(test.reason)) s = signUtxoSpend({ ...spend, commissionToMiner: true });
  }
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

/** The outpoint a signed forward spends (its one input). */
export function forwardOutpoint(net: UtxoNetwork, raw: string): { txid: string; vout: number } {
  const input = net.coin === 'bch' || net.coin === 'zec' ? forkid().parseForward(net, raw).ins[0] : Transaction.fromHex(raw).ins[0];
  return { txid: Buffer.from(input.hash).reverse().toString('hex'), vout: input.index };
}
