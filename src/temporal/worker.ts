import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime, Worker, type WorkflowBundle, type WorkerOptions } from '@temporalio/worker';
import type { Config } from '../config';
import { ScrubbedActivityFailures } from './scrub-failures';

/** workflows/index as source under tsx/ts-jest, or as compiled JS under dist/. */
export function workflowsEntry(): string {
  return require.resolve('../../workflows');
}

/** Modules the workflow bundle runs once per workflow thread, before the sandbox is frozen (workflows/preload.ts). */
export const WORKFLOW_PRELOAD_MODULES: readonly string[] = [require.resolve('../../workflows/preload')];

/**
 * The gateway's workflow code bundled ahead of a worker, as createWorker would bundle it (with its preload): for
 * the image (scripts/bundle-workflows.ts), the tests' workers and replays, and bench/sandbox.ts. `quiet` drops
 * the bundler's log lines.
 */
export function bundleGatewayWorkflows(opts: { quiet?: boolean } = {}): Promise<WorkflowBundle> {
  const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
  return bundleWorkflowCode({ workflowsPath: workflowsEntry(), preloadModules: [...WORKFLOW_PRELOAD_MODULES], ...(opts.quiet ? { logger: silent } : {}) });
}

/** The bundle made at image build time (scripts/bundle-workflows.ts), if this is a built image. */
export const PREBUILT_BUNDLE = path.resolve(__dirname, '../../workflow-bundle.js');

/**
 * Workflow task slots of a worker (SDK default 40). A due deposit's task holds its slot while its forward
 * waits for the block that includes it (a local activity, FORWARD_WATCH_MS) and while its confirmed callback
 * goes out, a few seconds under load, so a block that makes many deposits due fills the slots with waiting
 * as well as with work; and a poll takes a slot before it goes out, so with every slot held no poll is out,
 * and a new deposit's first task waits on the normal queue as well. bench/pipeline.ts, full burst (320
 * deposits on 2 cores), per-deposit histories at 60 slots: a due signal's task waited 7 s on the sticky
 * queue, and a first task 20 s on the normal one. Same day, runs alternated, slowest deposit / chain bound:
 * at 60 slots eth 1.63, 1.51, 2.04 and erc20_usdt 1.68, 1.50, 1.69; at 160, eth 1.59, 1.63, 1.81 and
 * erc20_usdt 1.38, 1.40, 1.39 (two more runs at 160: eth 1.80 and 1.55, erc20_usdt 1.48 and 1.28). A
 * held slot costs no CPU; the polls stay at WORKFLOW_TASK_POLLS.
 */
export const WORKFLOW_TASK_SLOTS = 160;

/**
 * Workflow task polls of a worker at most (SDK default 10). Each due deposit's task waited for a poll to
 * come back and go out again with 10 (bench/pipeline.ts, 40-deposit burst at 2 s blocks, 3 runs each: signal
 * → task started p50 330/232/285 ms with 10 polls, 164/108/216 with 40). More polls out at once mean more
 * task starts the server records at once: each must commit within 1 s or it is never delivered and waits out
 * its 10 s timeout (ops/temporal/config.yaml; with 80 polls and slots, 2 such in one of 2 full bursts). 60,
 * as many as there were slots before WORKFLOW_TASK_SLOTS grew.
 */
export const WORKFLOW_TASK_POLLS = 60;

/**
 * The share of a worker's workflow task polls kept on the normal queue (SDK default 0.2), the rest on its
 * sticky queue. A poll holds a task slot while it waits (sdk-core takes the slot before it polls), and in a
 * burst the normal queue is empty while the sticky one is full: at 0.2, 12 of the 60 slots waited on empty
 * normal polls and each worker ran at most 48 tasks (bench/pipeline.ts's per-deposit trace: 48-49 at once per
 * worker all through the eth deposits' due phase; then 60 slots, one per poll). At 0.1, 6 polls and 54 tasks.
 * Full burst, same machine and day, slowest eth deposit / chain bound: 1.51, 1.73, 1.54, 1.52 at 0.2; 1.41,
 * 1.35, 1.44, 1.48, 1.59, 1.52, 1.43 at 0.1, and 1.93 in an eighth run where the server lost 2 task starts
 * (see WORKFLOW_TASK_POLLS); an eth deposit's due signal to its task's start, p50 0.7-2.1 s at 0.2 and
 * 0.2-0.5 s at 0.1 (p95 3.2-5.1 and 2.0-3.9 s). A new deposit's first task (normal queue) started as soon at
 * both. With WORKFLOW_TASK_SLOTS above the polls, the polls are no longer what keeps slots from work.
 */
export const NORMAL_QUEUE_POLL_SHARE = 0.1;

/** Builds a worker for the gateway's task queue. */
export async function createWorker(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  activities: object;
  workflowsPath?: string;
  extra?: Partial<WorkerOptions>;
}): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  // The image's bundle was made with the same preload (scripts/bundle-workflows.ts); the SDK warns of bundler
  // options given beside a bundle.
  const code = !opts.workflowsPath && fs.existsSync(PREBUILT_BUNDLE)
    ? { workflowBundle: { codePath: PREBUILT_BUNDLE } }
    : { workflowsPath: opts.workflowsPath ?? workflowsEntry(), bundlerOptions: { preloadModules: [...WORKFLOW_PRELOAD_MODULES] } };
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    ...code,
    activities: opts.activities,
    // A workflow task waits at most this long on the sticky queue of the worker that holds its run, for a
    // free slot there, before any worker may take it from the normal queue (SDK default 10 s). When both
    // workers are busy, moving on helps no one: on the normal queue the task waits again, behind the
    // first tasks of new deposits and with a fifth of the polls, or another worker replays its history.
    // Full burst, 40 slots: with 3 s, 51 and 86 of 200 eth deposits had a task moved on, and the slowest
    // eth deposit / chain bound was 1.96 and 2.17 (one waited 3 s on the sticky queue, then 8.5 s on the
    // normal one); with 30 s none moved, 1.57 and 1.58. The longest wait on a sticky queue was 4 to 6 s.
    // A worker that dies leaves its sticky tasks waiting this long; its new ones go to the normal queue
    // once the server has had no poll from it for 10 s.
    stickyQueueScheduleToStartTimeout: '30s',
    maxConcurrentWorkflowTaskExecutions: WORKFLOW_TASK_SLOTS,
    // A task's local activities run while it holds its slot: as many of them as slots (SDK default 100).
    maxConcurrentLocalActivityExecutions: WORKFLOW_TASK_SLOTS,
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: WORKFLOW_TASK_POLLS },
    nonStickyToStickyPollRatio: NORMAL_QUEUE_POLL_SHARE,
    // No RPC credential or signed transaction in a history: failures leave activities scrubbed.
    interceptors: { activity: [() => ({ inbound: new ScrubbedActivityFailures() })] },
    ...opts.extra,
  });
  return { worker, connection };
}

/**
 * Process-wide Temporal SDK logging at WARN (or TEMPORAL_LOG_LEVEL), instead of the SDK's INFO chatter
 * (webpack output, worker state). The SDK's core (polls, workflow tasks, local activities) logs to the
 * process output at WARN, or at TEMPORAL_CORE_LOG_LEVEL: at DEBUG it names each workflow task the worker
 * received, which tells a task the server recorded as started but never delivered from a slow worker.
 * Call once, before the first connection, from a process entry point.
 */
export function installQuietRuntime(cfg: Pick<Config, 'temporalLogLevel' | 'temporalCoreLogLevel'>): void {
  const core = cfg.temporalCoreLogLevel;
  try {
    Runtime.install({
      logger: new DefaultLogger(cfg.temporalLogLevel),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core, other: 'ERROR' }) } },
    });
  } catch {
    // The runtime already exists (e.g. a test environment made it); keep its logger.
  }
}
