import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime, Worker, type WorkflowBundle, type WorkerOptions } from '@temporalio/worker';
import type { Config } from '../config';
import { ScrubbedActivityFailures } from './scrub-failures';
import { StepTimings } from './step-timings';

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
 * Workflow task slots of a worker (SDK default 40). A deposit's task holds its slot while its local
 * activities run (a reading, the confirmed callback's attempt), so a block that makes many deposits due
 * fills the slots with waiting as well as with work; and a
 * poll takes a slot before it goes out, so with every slot held no poll is out and new deposits' first tasks
 * wait too. A held slot costs no CPU. Figures: docs/decisions/0005-worker-task-slots-and-polls.md.
 */
export const WORKFLOW_TASK_SLOTS = 160;

/**
 * Workflow task polls of a worker at most (SDK default 10): with few, each due deposit's task waits for a
 * poll to come back and go out again. With too many, more task starts reach the server at once, and each
 * must be recorded within 1 s or it is never delivered and waits out its 10 s timeout
 * (ops/temporal/config.yaml). Figures: docs/decisions/0005-worker-task-slots-and-polls.md.
 */
export const WORKFLOW_TASK_POLLS = 60;

/**
 * The share of a worker's workflow task polls kept on the normal queue (SDK default 0.2), the rest on its
 * sticky queue. A poll holds a task slot while it waits (sdk-core takes the slot before it polls), and in a
 * burst the normal queue is empty while the sticky one is full, so polls on the normal queue keep slots from
 * work; new deposits' first tasks (normal queue) start as soon with a tenth. Figures:
 * docs/decisions/0005-worker-task-slots-and-polls.md.
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
    // workers are busy, moving on helps no one: on the normal queue the task waits again, behind the first
    // tasks of new deposits and with a tenth of the polls, or another worker replays its history. A worker
    // that dies leaves its sticky tasks waiting this long (docs/decisions/0005-worker-task-slots-and-polls.md).
    stickyQueueScheduleToStartTimeout: '30s',
    maxConcurrentWorkflowTaskExecutions: WORKFLOW_TASK_SLOTS,
    // A task's local activities run while it holds its slot: as many of them as slots (SDK default 100).
    maxConcurrentLocalActivityExecutions: WORKFLOW_TASK_SLOTS,
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: WORKFLOW_TASK_POLLS },
    nonStickyToStickyPollRatio: NORMAL_QUEUE_POLL_SHARE,
    // No RPC credential or signed transaction in a history: failures leave activities scrubbed. At debug
    // level, each step's timing is logged (step-timings.ts).
    interceptors: { activity: [() => ({ inbound: new StepTimings() }), () => ({ inbound: new ScrubbedActivityFailures() })] },
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
