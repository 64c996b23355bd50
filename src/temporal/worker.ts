import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import path from 'node:path';

export const WORKFLOWS_PATH = path.resolve(__dirname, '../../workflows/index.ts');

/** Builds a worker for the gateway's task queue; workflow code is bundled from workflows/index.ts. */
export async function createWorker(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  activities: object;
  workflowsPath?: string;
  extra?: Partial<WorkerOptions>;
}): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    workflowsPath: opts.workflowsPath ?? WORKFLOWS_PATH,
    activities: opts.activities,
    ...opts.extra,
  });
  return { worker, connection };
}
