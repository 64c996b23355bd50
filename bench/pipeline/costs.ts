import { ACTION_KINDS, totalActions } from './actions';
import type { Bed } from './bed';
import type { PgCounts } from './counting-proxies';
import { CPU_PARTS, startCpuSampler, type CpuPart, type CpuSampler } from './cpu-parts';
import type { DepositTimes, PaidDeposit } from './measure';
import { alignedTable } from './report';

/**
 * bench/pipeline.ts --costs: what one happy-path deposit of each family costs. The families are paid one
 * after another (a burst of each alone), so that the CPU, the statements and the RPC calls of a window
 * belong to one family; right after each burst's window, an idle window of the same length (the same
 * gateway, nothing paid) gives each part's amount at rest (watchers polling heads, pools, timers), which
 * is taken off. Temporal Actions and history events are read from each deposit's own workflow history,
 * so they need no idle window.
 */
export interface Counts {
  at: number;
  cpu: Record<CpuPart, number>;
  pg: PgCounts;
  /** JSON-RPC calls by network, by method. */
  rpc: Record<string, Record<string, number>>;
}

export interface Window {
  label: string;
  ms: number;
  deposits: number;
  cpu: Record<CpuPart, number>;
  pg: PgCounts;
  rpc: Record<string, Record<string, number>>;
}

export interface CostMeter {
  read(): Counts;
  stop(): void;
}

export function startCostMeter(bed: Bed): CostMeter {
  if (!bed.counters) throw new Error('--costs needs the bed started with counting relays');
  const { rpc, pg } = bed.counters;
  const sampler: CpuSampler = startCpuSampler({
    workerPids: () => bed.pids().workers, apiPids: () => bed.pids().api, gatewayDb: bed.databases.gateway, temporalDbs: bed.databases.temporal,
  });
  return {
    read: () => ({ at: Date.now(), cpu: sampler.read(), pg: pg.snapshot(), rpc: Object.fromEntries(Object.entries(rpc).map(([n, c]) => [n, c.snapshot().calls])) }),
    stop: () => sampler.stop(),
  };
}

const sub = <K extends string>(a: Record<K, number>, b: Record<K, number>) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k as K] - (b[k as K] ?? 0)])) as Record<K, number>;

export function windowOf(label: string, from: Counts, to: Counts, deposits: number): Window {
  const rpc: Window['rpc'] = {};
  for (const [n, calls] of Object.entries(to.rpc)) rpc[n] = sub(calls, from.rpc[n] ?? {});
  const bySql: NonNullable<PgCounts['bySql']> = {};
  for (const [sql, t] of Object.entries(to.pg.bySql ?? {})) {
    const f = from.pg.bySql?.[sql] ?? { statements: 0, roundTrips: 0 };
    bySql[sql] = { statements: t.statements - f.statements, roundTrips: t.roundTrips - f.roundTrips };
  }
  const pg = { statements: to.pg.statements - from.pg.statements, roundTrips: to.pg.roundTrips - from.pg.roundTrips, connections: to.pg.connections - from.pg.connections, bySql };
  return { label, ms: to.at - from.at, deposits, cpu: sub(to.cpu, from.cpu), pg, rpc };
}

/** Per deposit: a window's amount less the idle rate over the window's length, over its deposits. */
const perDeposit = (w: Window, idle: Window, f: (x: Window) => number) => (f(w) - (f(idle) * w.ms) / Math.max(idle.ms, 1)) / Math.max(w.deposits, 1);
const allRpcCalls = (w: Window) => Object.values(w.rpc).reduce((s, m) => s + Object.values(m).reduce((a, b) => a + b, 0), 0);

export interface FamilyCost {
  ticker: string;
  deposits: number;
  windowS: number;
  /** core-ms per deposit, by part (idle rate taken off). */
  cpuMs: Record<CpuPart, number>;
  statements: number;
  roundTrips: number;
  rpcCalls: number;
  /** The family's own node's calls per deposit by method, idle rate taken off (≥ 0.05 kept). */
  rpcByMethod: Record<string, number>;
  /** Statements per deposit by SQL text, idle rate taken off (≥ 0.05 kept). */
  statementsBySql: Record<string, number>;
  /** Mean per deposit, from the workflows' histories. */
  actions: Record<string, number> & { total: number };
  workflowTasks: number;
  events: number;
}

const NETWORK_OF: Record<string, string> = { eth: 'ethereum', erc20_usdt: 'ethereum', sol: 'solana', sol_usdc: 'solana', ltc: 'litecoin' };

export function familyCost(w: Window, idle: Window, rows: DepositTimes[]): FamilyCost {
  const mine = rows.filter((r) => r.ticker === w.label && r.actions);
  const mean = (f: (r: DepositTimes) => number) => (mine.length ? mine.reduce((s, r) => s + f(r), 0) / mine.length : NaN);
  const actions = Object.fromEntries(ACTION_KINDS.map((k) => [k, mean((r) => r.actions!.actions[k])])) as FamilyCost['actions'];
  actions.total = mean((r) => totalActions(r.actions!));
  const network = NETWORK_OF[w.label];
  // Per method and per SQL text, what the window holds beyond the idle rate; a kind the window holds less
  // of than at rest (the watchers' per-block reads coalesce when the workers are busy) counts as none.
  let rpcCalls = 0;
  const rpcByMethod: Record<string, number> = {};
  for (const m of new Set([...Object.keys(w.rpc[network] ?? {}), ...Object.keys(idle.rpc[network] ?? {})])) {
    const x = Math.max(0, perDeposit(w, idle, (x) => x.rpc[network]?.[m] ?? 0));
    rpcCalls += x;
    if (x >= 0.05) rpcByMethod[m] = Number(x.toFixed(2));
  }
  let statements = 0;
  let roundTrips = 0;
  const statementsBySql: Record<string, number> = {};
  for (const sql of new Set([...Object.keys(w.pg.bySql ?? {}), ...Object.keys(idle.pg.bySql ?? {})])) {
    const x = Math.max(0, perDeposit(w, idle, (x) => x.pg.bySql?.[sql]?.statements ?? 0));
    statements += x;
    roundTrips += Math.max(0, perDeposit(w, idle, (x) => x.pg.bySql?.[sql]?.roundTrips ?? 0));
    if (x >= 0.05) statementsBySql[sql] = Number(x.toFixed(2));
  }
  return {
    ticker: w.label,
    deposits: w.deposits,
    windowS: w.ms / 1000,
    cpuMs: Object.fromEntries(CPU_PARTS.map((p) => [p, perDeposit(w, idle, (x) => x.cpu[p])])) as Record<CpuPart, number>,
    statements,
    roundTrips,
    rpcCalls,
    rpcByMethod,
    statementsBySql,
    actions,
    workflowTasks: mean((r) => r.actions!.workflowTasks),
    events: mean((r) => r.events ?? 0),
  };
}

const add = <K extends string>(a: Record<K, number>, b: Record<K, number>) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k as K] + b[k as K]])) as Record<K, number>;
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');

export function costTable(costs: FamilyCost[], idles: Window[]): string {
  const idle = idles.reduce((a, w) => ({
    ...a, ms: a.ms + w.ms, cpu: add(a.cpu, w.cpu), pg: { ...a.pg, statements: a.pg.statements + w.pg.statements }, rpc: { all: { calls: allRpcCalls(a) + allRpcCalls(w) } },
  }));
  const head = ['per deposit', 'n', 'window s', 'workers core-ms', 'api core-ms', 'pg gateway core-ms', 'statements', 'round trips', 'RPC calls (its node)', 'Temporal actions', 'workflow tasks', 'events', 'Temporal server core-ms', 'pg Temporal core-ms'];
  const lines = costs.map((c) => [
    c.ticker, String(c.deposits), f1(c.windowS), f1(c.cpuMs.workers), f1(c.cpuMs.api), f1(c.cpuMs['pg-gateway']), f1(c.statements), f1(c.roundTrips), f1(c.rpcCalls),
    f1(c.actions.total), f1(c.workflowTasks), f1(c.events), f1(c.cpuMs.temporal), f1(c.cpuMs['pg-temporal']),
  ]);
  const rate = (x: number) => ((x * 1000) / Math.max(idle.ms, 1)).toFixed(1);
  const actionLines = costs.map((c) => `  ${c.ticker}: ${ACTION_KINDS.filter((k) => c.actions[k] > 0).map((k) => `${k} ${f1(c.actions[k])}`).join(', ')}`);
  const rpcLines = costs.map((c) => `  ${c.ticker} (${NETWORK_OF[c.ticker]}): ${Object.entries(c.rpcByMethod).sort((a, b) => b[1] - a[1]).map(([m, n]) => `${m} ${n}`).join(', ')}`);
  return [
    alignedTable(head, lines),
    `idle windows ${f1(idle.ms / 1000)} s in all, per second: workers ${rate(idle.cpu.workers)} core-ms, api ${rate(idle.cpu.api)}, pg gateway ${rate(idle.cpu['pg-gateway'])}, ` +
      `${rate(idle.pg.statements)} statements, ${rate(allRpcCalls(idle))} RPC calls, Temporal server ${rate(idle.cpu.temporal)} core-ms, pg Temporal ${rate(idle.cpu['pg-temporal'])} core-ms`,
    'Temporal actions per deposit by kind:',
    ...actionLines,
    'RPC calls per deposit on the family\'s node, by method:',
    ...rpcLines,
  ].join('\n');
}

/**
 * The families' bursts one after another: each paid, followed to its confirmed callbacks, then a few
 * seconds for its workflows to close, then an idle window as long; counts read at the ends of each.
 */
export async function familyBursts(o: {
  tickers: string[];
  meter: CostMeter;
  pay: (ticker: string) => Promise<{ paid: PaidDeposit[]; errors: string[] }>;
  confirmed: () => number;
  timeoutMs: number;
  log: (s: string) => void;
}): Promise<{ paid: PaidDeposit[]; errors: string[]; firstAt: number; lastAt: number; windows: Array<{ burst: Window; idle: Window }> }> {
  const paid: PaidDeposit[] = [];
  const errors: string[] = [];
  const windows: Array<{ burst: Window; idle: Window }> = [];
  const firstAt = Date.now();
  for (const ticker of o.tickers) {
    const before = o.meter.read();
    const base = o.confirmed();
    const burst = await o.pay(ticker);
    paid.push(...burst.paid);
    errors.push(...burst.errors);
    const deadline = Date.now() + o.timeoutMs;
    while (o.confirmed() - base < burst.paid.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    // A workflow closes once its confirmed callback is delivered; its last task is part of its cost.
    await new Promise((r) => setTimeout(r, 5000));
    const after = o.meter.read();
    const w = windowOf(ticker, before, after, burst.paid.length);
    o.log(`costs: ${ticker}: ${o.confirmed() - base}/${burst.paid.length} confirmed callbacks; window ${(w.ms / 1000).toFixed(1)} s, then as long idle`);
    await new Promise((r) => setTimeout(r, w.ms));
    windows.push({ burst: w, idle: windowOf('idle', after, o.meter.read(), 0) });
  }
  return { paid, errors, firstAt, lastAt: Date.now(), windows };
}
