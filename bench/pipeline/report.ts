import { quantile } from '../lib/quantile';
import type { DepositTimes } from './measure';

/**
 * Per asset, from the per-deposit moments (all on this machine's clock, ms):
 *   (a) latency  block seen → confirmed callback arrived
 *   (b) bound    block seen → required confirmations seen, plus forward stored/broadcast → its block seen:
 *                what the chain alone makes anyone wait; ratio = a / b per deposit
 *   (c) history  events per deposit workflow summed over its runs, and its runs
 *   (d) overhead (finality seen → callback) − (broadcast → forward's block seen): the gateway's own time
 *   (e) deposits whose workflow had a task time out, and the timeouts: on a busy worker's sticky queue
 *       (no free task slot within the sticky wait of src/temporal/worker.ts), or taken and not completed
 *       within the task timeout (10 s); each delays its deposit
 *   (f) each deposit's longest workflow task that completed (WorkflowTrace.longestTaskMs), p95/max: near the
 *       timeout, a `started` timeout in (e) may be a task that ran too long rather than one never delivered
 */
export interface Stats {
  n: number;
  p50: number;
  p95: number;
  max: number;
}

export interface AssetSummary {
  ticker: string;
  paid: number;
  /** Confirmed callbacks that arrived for the paid deposits. */
  confirmed: number;
  /** Deposits with every moment needed for (a), (b) and (d). */
  complete: number;
  latencyS: Stats | null;
  boundS: Stats | null;
  ratio: Stats | null;
  /** a / b of the deposit whose callback came last relative to its block. */
  slowestRatio: number | null;
  events: Stats | null;
  runs: Stats | null;
  overheadS: Stats | null;
  /** (e) Deposits with a workflow task that timed out, and the timeouts by kind (WorkflowTrace.taskTimeouts). */
  taskTimeouts: { deposits: number; sticky: number; started: number };
  /** (f) Seconds. */
  longestTaskS: Stats | null;
  /** Payments by stored result (done, sent, processing, pending, failed, or "unseen"). */
  results: Record<string, number>;
}

/** Rows under a header, each column as wide as its widest cell: the first left-aligned, the others right. */
export function alignedTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (cols: string[]) => cols.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [fmt(head), ...rows.map(fmt)].join('\n');
}

export function stats(xs: number[]): Stats | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: quantile(s, 0.5)!, p95: quantile(s, 0.95)!, max: s[s.length - 1] };
}

const def = (x: number | undefined): x is number => x !== undefined;

export function summarise(ticker: string, rows: DepositTimes[]): AssetSummary {
  const mine = rows.filter((r) => r.ticker === ticker);
  const complete = mine.filter((r) => [r.blockAt, r.finalAt, r.callbackAt, r.broadcastAt, r.forwardAt].every(def));
  const latency = complete.map((r) => r.callbackAt! - r.blockAt!);
  const bound = complete.map((r) => r.finalAt! - r.blockAt! + Math.max(0, r.forwardAt! - r.broadcastAt!));
  const ratios = complete.map((_, i) => latency[i] / Math.max(bound[i], 1));
  const slowest = latency.length ? latency.indexOf(Math.max(...latency)) : -1;
  const results: Record<string, number> = {};
  for (const r of mine) results[r.result ?? 'unseen'] = (results[r.result ?? 'unseen'] ?? 0) + 1;
  const sec = (xs: number[]) => xs.map((x) => x / 1000);
  return {
    ticker,
    paid: mine.length,
    confirmed: mine.filter((r) => def(r.callbackAt)).length,
    complete: complete.length,
    latencyS: stats(sec(latency)),
    boundS: stats(sec(bound)),
    ratio: stats(ratios),
    slowestRatio: slowest >= 0 ? ratios[slowest] : null,
    events: stats(mine.filter((r) => def(r.events)).map((r) => r.events!)),
    runs: stats(mine.filter((r) => def(r.runs)).map((r) => r.runs!)),
    overheadS: stats(sec(complete.map((r) => r.callbackAt! - r.finalAt! - Math.max(0, r.forwardAt! - r.broadcastAt!)))),
    taskTimeouts: {
      deposits: mine.filter((r) => r.trace?.taskTimeouts).length,
      sticky: mine.reduce((n, r) => n + (r.trace?.taskTimeouts?.sticky ?? 0), 0),
      started: mine.reduce((n, r) => n + (r.trace?.taskTimeouts?.started ?? 0), 0),
    },
    longestTaskS: stats(sec(mine.filter((r) => def(r.trace?.longestTaskMs)).map((r) => r.trace!.longestTaskMs!))),
    results,
  };
}

const f = (x: number | undefined | null, digits = 1) => (x === undefined || x === null ? '-' : x.toFixed(digits));
const tri = (s: Stats | null, digits = 1) => (s ? `${f(s.p50, digits)}/${f(s.p95, digits)}/${f(s.max, digits)}` : '-');

export function table(summaries: AssetSummary[]): string {
  const head = ['asset', 'paid', 'cb', '(a) block→cb s p50/p95/max', '(b) bound s p50/p95/max', 'a/b p50', 'a/b max', 'slowest a/b', '(c) events p50/max', 'runs p50/max', '(d) overhead s p50/p95', '(e) task timeouts n (sticky/started)', '(f) longest task s p95/max'];
  const lines = summaries.map((s) => [
    s.ticker,
    String(s.paid),
    String(s.confirmed),
    tri(s.latencyS),
    tri(s.boundS),
    f(s.ratio?.p50, 2),
    f(s.ratio?.max, 2),
    f(s.slowestRatio, 2),
    s.events ? `${s.events.p50}/${s.events.max}` : '-',
    s.runs ? `${s.runs.p50}/${s.runs.max}` : '-',
    s.overheadS ? `${f(s.overheadS.p50)}/${f(s.overheadS.p95)}` : '-',
    `${s.taskTimeouts.deposits} (${s.taskTimeouts.sticky}/${s.taskTimeouts.started})`,
    s.longestTaskS ? `${f(s.longestTaskS.p95)}/${f(s.longestTaskS.max)}` : '-',
  ]);
  return alignedTable(head, lines);
}

/**
 * Where each deposit's time after its block went, as p50/p95 seconds per step, in order (the chain's own
 * steps marked "chain"): moments from the node observer, payments.created_at, the workflow's history,
 * forward_txs and the receiver, all on this machine's clock. A step is left out for a deposit missing
 * either end. "ready" is the later of finality and the workflow's start: from then on only a reading
 * stands between the deposit and its forward. The hint rows show how late the watcher's signals came,
 * over the deposits that got one (most never need one when their workflow starts after finality).
 * The forward counts as scheduled when its activity task was scheduled.
 */
const later = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : Math.max(a, b));
const PHASES: Array<[string, (r: DepositTimes) => [number | undefined, number | undefined]]> = [
  ['block → recorded by the watcher', (r) => [r.blockAt, r.recordedAt]],
  ['recorded → workflow started', (r) => [r.recordedAt, r.trace?.startedAt]],
  ['block → final (chain)', (r) => [r.blockAt, r.finalAt]],
  ['ready → forward scheduled', (r) => [later(r.finalAt, r.trace?.startedAt), r.trace?.forwardScheduledAt]],
  ['scheduled → plan stored', (r) => [r.trace?.forwardScheduledAt, r.broadcastAt]],
  ['stored → forward mined (chain)', (r) => [r.broadcastAt, r.forwardAt]],
  ['mined → confirmed callback', (r) => [r.forwardAt, r.callbackAt]],
  ['hint: final → due signal', (r) => [r.finalAt, r.trace?.dueSignalAt]],
  ['hint: mined → forward signal', (r) => [r.forwardAt, r.trace?.forwardSignalAt]],
];

export function phases(tickers: string[], rows: DepositTimes[]): { table: string; data: Record<string, Record<string, Stats | null>> } {
  const data: Record<string, Record<string, Stats | null>> = {};
  for (const t of tickers) {
    data[t] = {};
    const mine = rows.filter((r) => r.ticker === t);
    for (const [name, ends] of PHASES) {
      const xs = mine.map(ends).filter((e): e is [number, number] => e[0] !== undefined && e[1] !== undefined).map(([a, b]) => (b - a) / 1000);
      data[t][name] = stats(xs);
    }
  }
  const cell = (s: Stats | null, name: string) => (s ? `${f(s.p50)}/${f(s.p95)}${name.startsWith('hint') ? ` (${s.n})` : ''}` : '-');
  const head = ['step (s, p50/p95; hints: (n) got one)', ...tickers];
  const lines = PHASES.map(([name]) => [name, ...tickers.map((t) => cell(data[t][name], name))]);
  return { table: alignedTable(head, lines), data };
}
