import { ASSETS } from '../../src/domain/assets';
import { parseUnits } from '../../src/domain/money';
import type { Deposit, DrillChains } from './drill-chains';

/**
 * The drill's verdict, counted on chain: what left each address_in, what reached each address_out, set
 * against what the gateway's public logs say. Our own tables are never the judge.
 */
export interface DrillConfig {
  ticker: string;
  callbackUrl: string;
  addressIn: string;
  addressOut: string;
  deposits: Deposit[];
}

export interface LogRecord {
  uuid: string;
  txid_in: string | null;
  vout?: number;
  txid_out: string | null;
  value_forwarded_coin: string;
  result: string;
  coin: string;
}

export interface ConfirmedCallback {
  uuid: string;
  txid_out: unknown;
  value_forwarded_coin: unknown;
  fee_coin: unknown;
}

/** Every count must be 0 except done, payments and deposits, which must be equal. */
export interface DrillCounts {
  deposits: number;
  payments: number;
  done: number;
  /** Deposits the gateway never recorded as a payment. */
  unseenDeposits: number;
  /** Outgoing transfers on chain beyond one per payment, summed over address_in. */
  doubleForwards: number;
  /** Payments whose forward never left address_in on chain. */
  unforwarded: number;
  /** Payments whose txid_out another payment also shows. */
  sharedTxidOut: number;
  /** address_out whose on-chain balance differs from the sum of value_forwarded_coin in the logs. */
  payoutMismatches: number;
  /** Payments not done at the end (failed, sent, processing, pending). */
  stuck: number;
  /** Payments done (or with a txid_out) for which the merchant verified no confirmed callback. */
  missingConfirmedCallbacks: number;
  /** UUIDs whose confirmed callbacks disagree on txid_out, value_forwarded_coin or fee_coin. */
  conflictingCallbacks: number;
  /** Gateway processes that exited without being killed by the drill. */
  processDeaths: number;
  /** On-chain checks that could not be made (the node did not answer in time): no verdict there. */
  uncountedChecks: number;
}

export interface VerdictDetail {
  /** Per address with a finding: what was seen. */
  findings: string[];
  resultsByState: Record<string, number>;
  maxConfirmedCallbacksPerUuid: number;
}

const key = (txid: string, vout?: number | null) => `${txid.toLowerCase()}:${vout ?? ''}`;

/** A chain read bounded in time: a node that hangs gives no verdict, never a hung drill. */
async function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

export async function judge(
  chains: DrillChains,
  configs: DrillConfig[],
  logs: Map<string, LogRecord[]>,
  callbacks: ConfirmedCallback[],
  processDeaths: number,
  log: (line: string) => void = () => undefined,
): Promise<{ counts: DrillCounts; detail: VerdictDetail }> {
  const c: DrillCounts = {
    deposits: 0, payments: 0, done: 0, unseenDeposits: 0, doubleForwards: 0, unforwarded: 0, sharedTxidOut: 0,
    payoutMismatches: 0, stuck: 0, missingConfirmedCallbacks: 0, conflictingCallbacks: 0, processDeaths, uncountedChecks: 0,
  };
  const findings: string[] = [];
  const resultsByState: Record<string, number> = {};
  const byTxidOut = new Map<string, string[]>();
  const cbByUuid = new Map<string, ConfirmedCallback[]>();
  /** A network whose node did not answer once is not asked again: each of its checks is uncounted at once. */
  const silent = new Set<string>();
  for (const cb of callbacks) cbByUuid.set(cb.uuid, [...(cbByUuid.get(cb.uuid) ?? []), cb]);

  for (const cfg of configs) {
    const decimals = ASSETS[cfg.ticker].decimals;
    const records = (logs.get(cfg.callbackUrl) ?? []).filter((r) => r.coin === cfg.ticker);
    c.deposits += cfg.deposits.length;
    c.payments += records.length;
    const seen = new Set(records.map((r) => key(r.txid_in ?? '', cfg.ticker === 'ltc' ? r.vout : undefined)));
    const unseen = cfg.deposits.filter((d) => !seen.has(key(d.txid, d.vout))).length;
    c.unseenDeposits += unseen;
    let forwardedSum = 0n;
    for (const r of records) {
      resultsByState[r.result] = (resultsByState[r.result] ?? 0) + 1;
      if (r.result === 'done') c.done++;
      else c.stuck++;
      forwardedSum += parseUnits(r.value_forwarded_coin, decimals);
      if (r.txid_out) byTxidOut.set(r.txid_out, [...(byTxidOut.get(r.txid_out) ?? []), r.uuid]);
      const cbs = cbByUuid.get(r.uuid) ?? [];
      if ((r.result === 'done' || r.result === 'sent') && cbs.length === 0) c.missingConfirmedCallbacks++;
      const shapes = new Set(cbs.map((x) => JSON.stringify([x.txid_out, x.value_forwarded_coin, x.fee_coin])));
      if (shapes.size > 1) c.conflictingCallbacks++;
    }
    c.stuck += unseen;
    const expected = cfg.deposits.length;
    log(`judging ${cfg.ticker} ${cfg.addressIn}`);
    let out: number;
    let balance: bigint;
    try {
      if (silent.has(ASSETS[cfg.ticker].network)) throw new Error(`${ASSETS[cfg.ticker].network} node did not answer earlier`);
      out = await bounded(chains.outgoing(cfg.ticker, cfg.addressIn, cfg.deposits), 180_000, `outgoing of ${cfg.addressIn}`);
      balance = await bounded(chains.balance(cfg.ticker, cfg.addressOut), 30_000, `balance of ${cfg.addressOut}`);
    } catch (e) {
      silent.add(ASSETS[cfg.ticker].network);
      c.uncountedChecks++;
      findings.push(`${cfg.ticker}: ${String(e)}`);
      continue;
    }
    if (out > expected) {
      c.doubleForwards += out - expected;
      findings.push(`${cfg.ticker} ${cfg.addressIn}: ${out} outgoing transfers for ${expected} payments`);
    }
    if (out < expected) {
      c.unforwarded += expected - out;
      findings.push(`${cfg.ticker} ${cfg.addressIn}: ${out} outgoing transfers for ${expected} payments`);
    }
    if (balance !== forwardedSum) {
      c.payoutMismatches++;
      findings.push(`${cfg.ticker} ${cfg.addressOut}: balance ${balance} on chain, logs forwarded ${forwardedSum} (diff ${balance - forwardedSum})`);
    }
    const states = records.map((r) => r.result).join(',');
    if (records.some((r) => r.result !== 'done') || unseen) findings.push(`${cfg.ticker} ${cfg.callbackUrl}: results [${states}], ${unseen} unseen`);
  }
  for (const [txid, uuids] of byTxidOut) {
    if (uuids.length > 1) {
      c.sharedTxidOut += uuids.length;
      findings.push(`txid_out ${txid} shared by ${uuids.length} payments`);
    }
  }
  const maxConfirmedCallbacksPerUuid = Math.max(0, ...[...cbByUuid.values()].map((v) => v.length));
  return { counts: c, detail: { findings, resultsByState, maxConfirmedCallbacksPerUuid } };
}

/** The drill's special cases as report lines (DrillSpecials without its lists). */
export function specialCounts(r: {
  specials: { minimumDeposits: number; minimumDone: number; swallowedSends: number; swallowedLanded: number; policyRefusals: number; contractDeposits: number; contractDone: number };
}) {
  const { minimumDeposits, minimumDone, swallowedSends, swallowedLanded, policyRefusals, contractDeposits, contractDone } = r.specials;
  return { minimumDeposits, minimumDone, swallowedSends, swallowedLanded, policyRefusals, contractDeposits, contractDone };
}

/** The counts as an aligned two-column table. */
export function formatCounts(counts: DrillCounts, extra: Record<string, string | number | null> = {}): string {
  const rows = [...Object.entries(counts), ...Object.entries(extra)].map(([k, v]) => [k, String(v)]);
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
}

/** Each configuration's logs records, by callback URL (an API that does not answer gives none). */
export async function fetchLogs(base: string, configs: DrillConfig[]): Promise<Map<string, LogRecord[]>> {
  const one = async (c: DrillConfig): Promise<LogRecord[]> => {
    try {
      const res = await fetch(`${base}/${c.ticker}/logs?callback=${encodeURIComponent(c.callbackUrl)}`, { signal: AbortSignal.timeout(10_000) });
      return res.status === 200 ? (((await res.json()) as { callbacks?: LogRecord[] }).callbacks ?? []) : [];
    } catch {
      return [];
    }
  };
  return new Map(await Promise.all(configs.map(async (c) => [c.callbackUrl, await one(c)] as const)));
}

/**
 * The end of a drill: waits (up to settleMs) until every deposit is recorded and done, or all are done or
 * failed, then judges on chain with the confirmed callbacks the merchant verified.
 */
export async function settleAndJudge(o: {
  base: string;
  chains: DrillChains;
  configs: DrillConfig[];
  received: Array<{ verified: boolean; fields?: Record<string, unknown> | null }>;
  processDeaths: number;
  settleMs: number;
  pollMs: number;
  stage: (line: string) => void;
}): Promise<{ settled: boolean; logs: Map<string, LogRecord[]>; counts: DrillCounts; detail: VerdictDetail }> {
  const total = o.configs.reduce((n, c) => n + c.deposits.length, 0);
  const end = Date.now() + o.settleMs;
  let settled = false;
  while (Date.now() < end) {
    const all = [...(await fetchLogs(o.base, o.configs)).values()].flat();
    if (all.length >= total && all.every((r) => r.result === 'done')) {
      settled = true;
      break;
    }
    // Every deposit recorded and each payment done or failed: nothing more will move.
    if (all.length >= total && all.every((r) => r.result === 'done' || r.result === 'failed')) break;
    await new Promise((r) => setTimeout(r, o.pollMs));
  }
  o.stage(`settled=${settled}; judging on chain`);
  await new Promise((r) => setTimeout(r, 3000)); // the last forwards' blocks
  const callbacks = o.received.filter((r) => r.verified && r.fields?.result === 'sent').map((r) => r.fields as unknown as ConfirmedCallback);
  const logs = await fetchLogs(o.base, o.configs);
  const { counts, detail } = await judge(o.chains, o.configs, logs, callbacks, o.processDeaths, o.stage);
  return { settled, logs, counts, detail };
}
