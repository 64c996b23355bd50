import { FAULT_KINDS } from '../helpers/hostile-rpc';
import { runDrill, type DrillReport } from './drill';
import type { StuckEvidence } from './drill-evidence';
import { formatCounts, specialCounts } from './drill-verdict';

/**
 * The money-integrity drill, small (issue 10; `npx tsx scripts/drill.ts` runs it with ≥ 200 deposits):
 * 30 deposits over eth, erc20_usdt, sol, sol_usdc and ltc, three to each address_in, one deposit of
 * exactly each asset's published minimum and one ETH deposit sent by a contract, through hostile RPC
 * proxies, with workers SIGKILLed at activity boundaries and PostgreSQL restarted once; a SOL forward's sends swallowed until its blockhash expires,
 * and litecoind refusing every broadcast on relay policy for a while. Counted on chain, every count but
 * done is 0 and every deposit is done.
 */
let report: DrillReport;
/** A payment not done, with its evidence: in the log and in a failing test's diff. */
const stuckLine = (s: StuckEvidence) =>
  `${s.ticker} ${s.uuid} ${s.result} workflow ${s.workflow} txid_out ${s.txidOut} reason ${s.reason} pending [${s.pending.join(' | ')}]`;
const lines: string[] = [];

beforeAll(async () => {
  report = await runDrill({
    configsPerTicker: 2,
    depositsPerConfig: 3,
    seed: 1010,
    killGapMs: [15_000, 40_000],
    chaosMinMs: 30_000,
    chaosMaxMs: 180_000,
    // The swallowed SOL forward needs its blockhash expired (150 slots) before it is signed again: 600 ms slots
    // make that 90 s.
    solSlotTimeMs: 600,
    settleMs: 300_000,
    log: (l) => {
      lines.push(l);
      process.stderr.write(`drill ${l}\n`); // live progress; jest prints console output only at the end
    },
  });
  console.log(
    [
      ...lines,
      formatCounts(report.counts, { ...specialCounts(report), recoveryMs: report.recoveryMs, pgDownMs: report.pgDownMs, kills: report.kills, settled: String(report.settled) }),
      `published minimums paid: ${JSON.stringify(report.specials.minimums)}; swallowed signatures: ${report.specials.swallowedSignatures.join(', ')}`,
      `faults: ${JSON.stringify(report.faults)}`,
      `nodes probed directly: ${JSON.stringify(report.nodes)}`,
      `not done: ${JSON.stringify(report.failureReasons, null, 1)}`,
      ...report.stuck.map((s) => `stuck: ${stuckLine(s)}`),
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
    expect(c.deposits).toBe(36);
    const zeros = Object.fromEntries(Object.keys(c).map((k) => [k, 0]));
    // A payment not done brings its evidence into the failure's diff (CI shows the diff, not the whole log).
    const notDone = report.stuck.map(stuckLine);
    expect({ counts: c, notDone }).toEqual({ counts: { ...zeros, deposits: 36, payments: 36, done: 36 }, notDone: [] });
  });

  it('a deposit of each published minimum is done; the swallowed SOL forward never landed, signed again; litecoind refused on policy', () => {
    expect(specialCounts(report)).toEqual({
      minimumDeposits: 5, minimumDone: 5, swallowedSends: expect.any(Number), swallowedLanded: 0, policyRefusals: expect.any(Number), contractDeposits: 1, contractDone: 1,
    });
    expect(report.specials.minimumNotDone).toEqual([]);
    expect(report.specials.swallowedSignatures).toHaveLength(1);
    expect(report.specials.swallowedSends).toBeGreaterThan(0);
    expect(report.specials.policyRefusals).toBeGreaterThan(0);
  });

  it('the API answers logs again within 30 s of the PostgreSQL restart', () => {
    expect(report.recoveryMs).not.toBeNull();
    expect(report.recoveryMs!).toBeLessThan(30_000);
  });
});
