import fs from 'node:fs';
import path from 'node:path';
import { formatCounts } from './drill-verdict';
import { runProductionTopology, TOPOLOGY_TICKERS, UTXO_QUEUE, type TopologyReport } from './production-topology';

/**
 * The production Temporal shape under faults (issue 14): API process, two worker processes and Litecoin's
 * worker of its own (its task queue), the Temporal
 * server of ops/temporal on PostgreSQL with SQL visibility and the search attributes; deposits in three
 * waves with a worker SIGKILLed mid-forward, a Temporal server crash and a PostgreSQL restart. Counted on
 * chain, every deposit ends done, forwarded once.
 */
const WAVES = 3;
let report: TopologyReport;

beforeAll(async () => {
  report = await runProductionTopology({
    waves: WAVES,
    settleMs: 240_000,
    log: (l) => process.stderr.write(`topology ${l}\n`), // live progress; jest prints console output only at the end
  });
  console.log(
    [
      ...report.events,
      formatCounts(report.counts, { temporalDownMs: report.temporalDownMs, pgDownMs: report.pgDownMs, temporalSurvivedPgRestart: String(report.temporalSurvivedPgRestart), settled: String(report.settled), durationS: Math.round(report.durationMs / 1000) }),
      `killed mid-forward: ${report.killed}`,
      `search attributes: ${JSON.stringify(report.searchAttributes)}`,
      ...report.stuck.map((s) => `stuck: ${s.ticker} ${s.uuid} ${s.result} workflow ${s.workflow} reason ${s.reason} pending [${s.pending.join(' | ')}]`),
      ...report.detail.findings.map((f) => `finding: ${f}`),
      `process logs: ${report.logDir}`,
    ].join('\n'),
  );
}, 4_200_000); // a fresh machine may still be building the Temporal server (started by the pretest): up to an hour

describe('production topology: Temporal server on PostgreSQL, split processes, faults', () => {
  const deposits = TOPOLOGY_TICKERS.length * WAVES;

  it('ran the three faults: a worker SIGKILLed mid-forward, the Temporal server crashed, PostgreSQL restarted', () => {
    expect(report.killed).toEqual(expect.any(String));
    expect(report.temporalDownMs).not.toBeNull();
    expect(report.pgDownMs).not.toBeNull();
    expect(report.temporalSurvivedPgRestart).toBe(true);
  });

  it('every deposit is done, forwarded once, and every other count is 0, counted on chain', () => {
    const zeros = Object.fromEntries(Object.keys(report.counts).map((k) => [k, 0]));
    expect(report.counts).toEqual({ ...zeros, deposits, payments: deposits, done: deposits });
  });

  it('the custom search attributes find every payment on SQL visibility', () => {
    expect(report.searchAttributes.byTicker).toEqual(Object.fromEntries(TOPOLOGY_TICKERS.map((t) => [t, WAVES])));
    expect(report.searchAttributes.done).toBe(deposits);
    const found = Object.entries(report.searchAttributes.byUuid);
    expect(found).toHaveLength(TOPOLOGY_TICKERS.length);
    for (const [, workflowId] of found) expect(workflowId).toMatch(/^deposit:/);
  });

  it("Litecoin's deposits ran on its own queue, watched by its own worker; the other networks' on the gateway queue", () => {
    expect(report.searchAttributes.queuesByTicker).toEqual(Object.fromEntries(TOPOLOGY_TICKERS.map((t) => [t, [t === 'ltc' ? UTXO_QUEUE : 'gateway']])));
    // Each worker's `worker ready` line, at every start (a worker SIGKILLed mid-forward starts again).
    const served = (name: string) =>
      fs.readFileSync(path.join(report.logDir, `${name}.log`), 'utf8').split('\n').filter((l) => l.includes('"worker ready"'))
        .map((l) => JSON.parse(l) as { taskQueue: string; networks: string[] }).map((r) => ({ taskQueue: r.taskQueue, networks: [...r.networks].sort() }));
    const general = { taskQueue: 'gateway', networks: ['ethereum', 'solana'] };
    for (const [name, expected] of [['worker-1', general], ['worker-2', general], ['worker-utxo', { taskQueue: UTXO_QUEUE, networks: ['litecoin'] }]] as const) {
      const lines = served(name);
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) expect([name, l]).toEqual([name, expected]);
    }
  });

  it('the server took every setting of ops/temporal/dynamicconfig.yaml (it warns of a key it does not know)', () => {
    const log = fs.readFileSync(path.join(report.logDir, 'temporal-server.log'), 'utf8');
    expect(log.split('\n').filter((l) => /dynamic config (warning|error)|loading dynamic config failed/i.test(l))).toEqual([]);
  });
});
