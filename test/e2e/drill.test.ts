import { FAULT_KINDS } from '../helpers/hostile-rpc';
import { runDrill, type DrillReport } from './drill';
import { formatCounts } from './drill-verdict';

/**
 * The money-integrity drill, small (issue 10; `npx tsx scripts/drill.ts` runs it with ≥ 200 deposits):
 * 30 deposits over eth, erc20_usdt, sol, sol_usdc and ltc, three to each address_in, through hostile
 * RPC proxies, with workers SIGKILLed at activity boundaries and PostgreSQL restarted once. Counted on
 * chain, every count but done is 0 and every deposit is done.
 */
let report: DrillReport;
const lines: string[] = [];

beforeAll(async () => {
  report = await runDrill({
    configsPerTicker: 2,
    depositsPerConfig: 3,
    seed: 1010,
    killGapMs: [15_000, 40_000],
    chaosMinMs: 30_000,
    chaosMaxMs: 180_000,
    settleMs: 180_000,
    log: (l) => {
      lines.push(l);
      process.stderr.write(`drill ${l}\n`); // live progress; jest prints console output only at the end
    },
  });
  console.log(
    [
      ...lines,
      formatCounts(report.counts, { recoveryMs: report.recoveryMs, pgDownMs: report.pgDownMs, kills: report.kills, settled: String(report.settled) }),
      `faults: ${JSON.stringify(report.faults)}`,
      `nodes probed directly: ${JSON.stringify(report.nodes)}`,
      `not done: ${JSON.stringify(report.failureReasons, null, 1)}`,
      ...report.stuck.map((s) => `stuck: ${s.ticker} ${s.uuid} ${s.result} workflow ${s.workflow} txid_out ${s.txidOut} reason ${s.reason} pending [${s.pending.join(' | ')}]`),
      ...report.deaths.map((d) => `death: ${d.name} code=${d.code} ${d.atMsAfterPgRestart} ms after the PostgreSQL restart: ${d.why}`),
      ...report.detail.findings.map((f) => `finding: ${f}`),
      `process logs: ${report.logDir}`,
    ].join('\n'),
  );
}, 1_200_000);

describe('money-integrity drill (small)', () => {
  it('ran the chaos it promised: every fault kind injected, workers killed, PostgreSQL restarted', () => {
    const injected = Object.fromEntries(FAULT_KINDS.map((k) => [k, Object.values(report.faults).reduce((n, s) => n + s.faults[k], 0)]));
    for (const k of FAULT_KINDS) expect({ kind: k, injected: injected[k] > 0 }).toEqual({ kind: k, injected: true });
    expect(report.kills).toBeGreaterThan(0);
    expect(report.pgDownMs).not.toBeNull();
  });

  it('every deposit is done, and every other count is 0, counted on chain', () => {
    const c = report.counts;
    expect(c.deposits).toBe(30);
    const zeros = Object.fromEntries(Object.keys(c).map((k) => [k, 0]));
    expect(c).toEqual({ ...zeros, deposits: 30, payments: 30, done: 30 });
  });

  it('the API answers logs again within 30 s of the PostgreSQL restart', () => {
    expect(report.recoveryMs).not.toBeNull();
    expect(report.recoveryMs!).toBeLessThan(30_000);
  });
});
