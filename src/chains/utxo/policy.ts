/**
 * What a UTXO node refuses to relay: its minimum fee rate and its dust rule. Read from the node where it
 * tells (getnetworkinfo's relayfee, getmempoolinfo's mempoolminfee and, on Knots, dustrelayfee), else the
 * coin's known policy. A forward signed within this policy is one the node takes.
 */
import type { UtxoCoin } from './networks';
import { toSats } from './rpc';

/**
 * The dust rule of Bitcoin Core and its forks: an output is dust when it is worth less than what spending
 * it would cost at the dust relay fee (its own serialized size plus the input that spends it).
 * - btc, bch: Core's DUST_RELAY_TX_FEE, 3000 sat/kvB (294 sat for P2WPKH, 546 for P2PKH).
 * - ltc: Litecoin Core 0.21 keeps ten times that, 30000 sat/kvB: litecoind refuses a P2WPKH output below
 *   2940 lit and a P2PKH one below 5460 lit as "dust" (testmempoolaccept on a regtest node).
 * - doge: Dogecoin Core's fixed 0.01 DOGE dust limit; zec: a conservative fixed 546 zat.
 */
export type DustRule = { perKvB: bigint } | { fixed: bigint };

const KNOWN_DUST: Record<UtxoCoin, DustRule> = {
  btc: { perKvB: 3000n },
  bch: { perKvB: 3000n },
  ltc: { perKvB: 30000n },
  doge: { fixed: 1_000_000n },
  zec: { fixed: 546n },
};

/** The coin's dust rule when its node does not say (a fixed-limit coin keeps its limit). */
export function knownDustRule(coin: UtxoCoin, nodeDustRelayPerKvB?: bigint): DustRule {
  const known = KNOWN_DUST[coin];
  if ('fixed' in known || nodeDustRelayPerKvB === undefined || nodeDustRelayPerKvB <= 0n) return known;
  return { perKvB: nodeDustRelayPerKvB };
}

/** A segwit witness program (OP_0..OP_16 then one push of 2 to 40 bytes): spent with a witness, so cheaper. */
function isWitnessProgram(script: Uint8Array): boolean {
  if (script.length < 4 || script.length > 42) return false;
  const v = script[0];
  if (v !== 0 && (v < 0x51 || v > 0x60)) return false;
  return script[1] + 2 === script.length;
}

/** Core's GetDustThreshold for an output paying `script`, rounded up (never below what the node refuses). */
export function dustThreshold(rule: DustRule, script: Uint8Array): bigint {
  if ('fixed' in rule) return rule.fixed;
  const varint = script.length < 0xfd ? 1 : 3;
  const output = 8 + varint + script.length;
  // The input that spends it: outpoint 36, sequence 4, script length 1, and a signature script of 107
  // bytes (in the witness for a witness program, so a quarter of it).
  const spend = isWitnessProgram(script) ? 32 + 4 + 1 + Math.floor(107 / 4) + 4 : 32 + 4 + 1 + 107 + 4;
  return (rule.perKvB * BigInt(output + spend) + 999n) / 1000n;
}

/** The largest dust threshold of a standard single-key output (P2PKH): what any address_out is held to. */
export function worstPayoutDust(rule: DustRule): bigint {
  return dustThreshold(rule, new Uint8Array([0x76, 0xa9, 0x14, ...new Uint8Array(20), 0x88, 0xac]));
}

/** What the node answered about its relay policy, coin amounts per kvB as the node prints them. */
export interface NodePolicyReading {
  relayfee?: string;
  mempoolminfee?: string;
  dustrelayfee?: string;
}

export interface RelayPolicy {
  /** The lowest fee rate the node relays now, sat/vB rounded up (at least 1). */
  minRate: bigint;
  dust: DustRule;
}

const perKvB = (coins: string | undefined): bigint | undefined => {
  if (coins === undefined) return undefined;
  const v = toSats(coins);
  return v > 0n ? v : undefined;
};

/** The node's reading made a policy; what it leaves out is the coin's known rule (1 sat/vB at least). */
export function relayPolicy(coin: UtxoCoin, r: NodePolicyReading): RelayPolicy {
  const relay = [perKvB(r.relayfee), perKvB(r.mempoolminfee)].reduce<bigint>((m, v) => (v !== undefined && v > m ? v : m), 0n);
  const minRate = (relay + 999n) / 1000n;
  return { minRate: minRate > 0n ? minRate : 1n, dust: knownDustRule(coin, perKvB(r.dustrelayfee)) };
}

/**
 * Reject reasons (the node's codes, compared whole) that are relay policy on fee or dust: the same outpoint
 * signed again at the node's rate, with a dust commission left to the miner, is taken. Core 0.21
 * (litecoind) says "dust", Knots 29 "dust-nonanchor"; fee: below the relay minimum, or the mempool's
 * current minimum when it is full.
 */
const POLICY_REFUSALS = new Set(['dust', 'dust-nonanchor', 'min relay fee not met', 'mempool min fee not met', 'insufficient priority']);

export function isPolicyRefusal(reason: string): boolean {
  return POLICY_REFUSALS.has(reason);
}

/** A refusal for dust: the commission output, if any, goes to the miner instead. */
export function isDustRefusal(reason: string): boolean {
  return reason === 'dust' || reason === 'dust-nonanchor';
}
