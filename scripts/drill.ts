// The money-integrity drill at full size (issue 10): ≥ 200 deposits over eth, erc20_usdt, sol, sol_usdc
// and ltc through hostile RPC proxies, workers SIGKILLed at activity boundaries, PostgreSQL restarted once.
//
//   npx tsx scripts/drill.ts [--configs 14] [--per 3] [--seed 42] [--chaos-min 10] [--settle-min 15] [--json report.json]
//
// Prints the counts table; exits 1 when any count but done is not 0 (or done differs from deposits).
import fs from 'node:fs';
import { runDrill } from '../test/e2e/drill';
import { formatCounts, specialCounts } from '../test/e2e/drill-verdict';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

async function main(): Promise<number> {
  const report = await runDrill({
    configsPerTicker: Number(arg('configs', '14')),
    depositsPerConfig: Number(arg('per', '3')),
    seed: Number(arg('seed', '42')),
    settleMs: Number(arg('settle-min', '15')) * 60_000,
    killGapMs: [15_000, 45_000],
    chaosMinMs: 60_000,
    chaosMaxMs: Number(arg('chaos-min', '10')) * 60_000,
    log: (l) => console.log(l),
  });
  const { counts } = report;
  console.log('\n' + formatCounts(counts, {
    ...specialCounts(report), recoveryMs: report.recoveryMs, pgDownMs: report.pgDownMs, kills: report.kills, settled: String(report.settled), durationS: Math.round(report.durationMs / 1000),
  }));
  console.log('\npublished minimums paid:', JSON.stringify(report.specials.minimums), 'swallowed signatures:', report.specials.swallowedSignatures.join(', '));
  console.log('faults injected:', JSON.stringify(report.faults));
  console.log('nodes probed directly:', JSON.stringify(report.nodes));
  console.log('not done, by stored reason:', JSON.stringify(report.failureReasons, null, 1));
  for (const s of report.stuck) console.log(`stuck: ${s.ticker} ${s.uuid} ${s.result} workflow ${s.workflow} txid_out ${s.txidOut}\n  reason: ${s.reason}\n  ${s.pending.join('\n  ')}`);
  for (const d of report.deaths) console.log(`death: ${d.name} code=${d.code} signal=${d.signal} at ${d.atMsAfterPgRestart} ms after the PostgreSQL restart\n${d.why}`);
  for (const f of report.detail.findings.slice(0, 60)) console.log(`finding: ${f}`);
  console.log(`process logs: ${report.logDir}`);
  const out = arg('json', '');
  if (out) fs.writeFileSync(out, JSON.stringify(report, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2));
  const bad = Object.entries(counts).filter(([k, v]) => !['deposits', 'payments', 'done'].includes(k) && v !== 0);
  const s = report.specials;
  const specialsBad = s.minimumDone !== s.minimumDeposits || s.swallowedLanded !== 0 || s.swallowedSends === 0 || s.policyRefusals === 0 || s.contractDone !== s.contractDeposits;
  return bad.length || specialsBad || counts.done !== counts.deposits || counts.payments !== counts.deposits ? 1 : 0;
}

main().then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(2);
});
