import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Config } from '../config';

/** workflows/index as source under tsx/ts-jest, or as compiled JS under dist/. */
export function workflowsEntry(): string {
  return require.resolve('../../workflows');
}

/** The bundle made at image build time (scripts/bundle-workflows.ts), if this is a built image. */
export const PREBUILT_BUNDLE = path.resolve(__dirname, '../../workflow-bundle.js');

/** Workflow task polls a worker keeps open at most: the SDK's 40 workflow task slots, one poll each. */
export const WORKFLOW_TASK_POLLS = 40;

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
  const code =
    !opts.workflowsPath && fs.existsSync(PREBUILT_BUNDLE) ? { workflowBundle: { codePath: PREBUILT_BUNDLE } } : { workflowsPath: opts.workflowsPath ?? workflowsEntry() };
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    ...code,
    activities: opts.activities,
    // A workflow task waits at most this long on the sticky queue of the worker that holds its run before
    // any worker may take it (SDK default 10 s). In the full-size burst of bench/pipeline.ts (320 deposits
    // on 2 cores) 9 tasks sat the whole 10 s there, then were taken from the normal queue within 0.2 s.
    stickyQueueScheduleToStartTimeout: '3s',
    // Up to 40 polls for workflow tasks at once (SDK default 10, of which 8 on the sticky queue), as many as
    // the worker has task slots: a block that makes 15 deposits due signals 15 workflows of one worker at
    // once, and each task waited for a poll to come back and go out again. bench/pipeline.ts, 40-deposit
    // burst at 2 s blocks, 3 runs each: signal → task started p50 330/232/285 ms before, 164/108/216 after.
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: WORKFLOW_TASK_POLLS },
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
