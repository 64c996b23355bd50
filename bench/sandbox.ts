/**
 * The workflow sandbox's CPU per payment: one recorded paymentLifecycle history (found, final, forwarded,
 * confirmed callback delivered: test/fixtures/histories, 25 events) replayed many times by the SDK's replay
 * worker, with the gateway's bundle (its preload: workflows/preload.ts) and with the same code bundled without
 * it (the SDK's sandbox as it comes), rounds interleaved in one process. Replay runs the workflow code of every
 * workflow task in the sandbox as a worker does, with no server and no activity, so the figure is the workflow
 * thread's share of a deposit.
 *
 *   npx tsx bench/sandbox.ts                         (400 replays per round, 4 rounds per bundle)
 *   npx tsx bench/sandbox.ts --replays 1000 --rounds 6
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { bundleGatewayWorkflows, workflowsEntry } from '../src/temporal/worker';

const { values: flags } = parseArgs({ options: { replays: { type: 'string', default: '400' }, rounds: { type: 'string', default: '4' } } });
const REPLAYS = Number(flags.replays);
const ROUNDS = Number(flags.rounds);
const HISTORY = path.resolve(__dirname, '../test/fixtures/histories/search-attributes-delivered.json');

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** CPU milliseconds of this process (every thread) per replay, for one round. */
async function round(workflowBundle: WorkflowBundle, history: unknown, tag: string): Promise<number> {
  async function* histories() {
    for (let i = 0; i < REPLAYS; i++) yield { workflowId: `${tag}-${i}`, history };
  }
  const before = process.cpuUsage();
  let n = 0;
  for await (const result of Worker.runReplayHistories({ workflowBundle, replayName: tag }, histories())) {
    if (result.error) throw result.error;
    n++;
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const history: unknown = JSON.parse(fs.readFileSync(HISTORY, 'utf8'));
  const bundles = {
    gateway: await bundleGatewayWorkflows({ quiet: true }),
    'SDK default': await bundleWorkflowCode({ workflowsPath: workflowsEntry(), logger: quiet }),
  };
  const figures: Record<string, number[]> = { gateway: [], 'SDK default': [] };
  // A first round of each warms the code; it is not counted.
  for (const [name, bundle] of Object.entries(bundles)) await round(bundle, history, `warm-${name}`);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? (['gateway', 'SDK default'] as const) : (['SDK default', 'gateway'] as const);
    for (const name of order) figures[name].push(await round(bundles[name], history, `${name}-${r}`));
  }
  for (const [name, xs] of Object.entries(figures)) {
    console.log(`${name.padEnd(12)} CPU per replay: median ${median(xs).toFixed(2)} ms (rounds: ${xs.map((x) => x.toFixed(2)).join(', ')})`);
  }
  console.log(`ratio gateway / SDK default (median CPU per replay): ${(median(figures.gateway) / median(figures['SDK default'])).toFixed(2)}`);
  console.log(`${REPLAYS} replays of ${path.basename(HISTORY)} per round, ${ROUNDS} rounds per bundle, interleaved`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
