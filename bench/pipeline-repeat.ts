/**
 * bench/pipeline.ts run several times in a row, each run on its own fresh bed, and its per-asset figures
 * gathered: on a shared 2-core machine one burst's slowest deposit moves by a tenth of its bound from one run
 * to the next (same code), so a target is read from several runs. Each run's ratios are against the chain's
 * bound measured in that run, as bench/pipeline.ts prints them.
 *
 *   npx tsx bench/pipeline-repeat.ts                       (3 runs of bench/pipeline.ts's small burst)
 *   npx tsx bench/pipeline-repeat.ts --runs 5 -- --eth 200 --erc20 50 --sol 50 --usdc 20 --ltc 0 --sol-slot-ms 1000
 *
 * Everything after `--` goes to every run of bench/pipeline.ts (not --json: each run writes its own, kept in
 * the printed folder). Per asset it prints the slowest deposit / bound of each run, their median, how many runs
 * met `--target` (default 1.5), and the median deposit's ratio; per run the machine's busy CPU, the deposits
 * with a workflow task timed out and the longest workflow task that completed. It exits non-zero when a run fails.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { stats, type AssetSummary } from './pipeline/report';

const split = process.argv.indexOf('--');
const own = split < 0 ? process.argv.slice(2) : process.argv.slice(2, split);
const passed = split < 0 ? [] : process.argv.slice(split + 1);
const { values: flags } = parseArgs({ args: own, options: { runs: { type: 'string', default: '3' }, target: { type: 'string', default: '1.5' } } });
const RUNS = Math.max(1, Number(flags.runs));
const TARGET = Number(flags.target);
if (passed.includes('--json')) throw new Error('--json is set per run by this script');

/** What this script reads of a run's --json (bench/pipeline.ts writes it). */
interface Run {
  summaries: AssetSummary[];
  busyCoreS: number;
  /** With --steal: the stealers' share of busyCoreS. */
  stolenCoreS?: number;
}

function main(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-pipeline-repeat-'));
  const runs: Run[] = [];
  for (let i = 1; i <= RUNS; i++) {
    const json = path.join(dir, `run-${i}.json`);
    console.log(`== run ${i} of ${RUNS}: bench/pipeline.ts ${passed.join(' ')}`);
    const r = spawnSync(process.execPath, [path.resolve(__dirname, '../node_modules/tsx/dist/cli.mjs'), path.resolve(__dirname, 'pipeline.ts'), ...passed, '--json', json], { stdio: 'inherit' });
    if (r.status !== 0) {
      console.error(`run ${i} failed (exit ${r.status ?? r.signal}); runs so far in ${dir}`);
      process.exit(1);
    }
    runs.push(JSON.parse(fs.readFileSync(json, 'utf8')) as Run);
  }
  const f = (x: number | null | undefined) => (x == null ? '-' : x.toFixed(2));
  console.log(`\n${RUNS} runs (per-run JSON in ${dir}); slowest deposit / its chain bound, per run:`);
  for (const { ticker } of runs[0].summaries) {
    const of = runs.map((run) => run.summaries.find((s) => s.ticker === ticker)!);
    const slowest = of.map((s) => s.slowestRatio).filter((x): x is number => x !== null);
    const met = slowest.filter((x) => x <= TARGET).length;
    console.log(
      `${ticker.padEnd(11)} ${slowest.map(f).join(', ')}  median ${f(stats(slowest)?.p50)}, ${met} of ${RUNS} ≤ ${TARGET}; ` +
        `median deposit ${of.map((s) => f(s.ratio?.p50)).join(', ')}`,
    );
  }
  console.log(`machine CPU per burst (core-s): ${runs.map((run) => run.busyCoreS.toFixed(1)).join(', ')}`);
  if (runs.some((run) => run.stolenCoreS !== undefined)) console.log(`of which the stealers (--steal): ${runs.map((run) => (run.stolenCoreS ?? 0).toFixed(1)).join(', ')}`);
  // A started task's timeout is a start the server never delivered or a task that ran past the timeout: the
  // longest completed task of the run tells which is likely (bench/pipeline/report.ts, (e) and (f)).
  const longest = (run: Run) => Math.max(0, ...run.summaries.map((s) => s.longestTaskS?.max ?? 0));
  console.log(`deposits with a workflow task timed out, per run: ${runs.map((run) => run.summaries.reduce((n, s) => n + s.taskTimeouts.deposits, 0)).join(', ')}`);
  console.log(`longest completed workflow task, per run (s): ${runs.map((run) => longest(run).toFixed(1)).join(', ')}`);
}

main();
