import fs from 'node:fs';
import path from 'node:path';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';

/** workflows/index as source under tsx/ts-jest, or as compiled JS under dist/. */
export function workflowsEntry(): string {
  return require.resolve('../../workflows');
}

/** The bundle made at image build time (scripts/bundle-workflows.ts), if this is a built image. */
export const PREBUILT_BUNDLE = path.resolve(__dirname, '../../workflow-bundle.js');

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
    ...opts.extra,
  });
  return { worker, connection };
}
