import path from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread that runs the entry module `name` of `entryDir` (src/entry as reached from the caller's own
 * folder, so that the compiled tree and npm start's bundles both lead to it) the way this process runs its own
 * code: the compiled or bundled `.js`, or the `.ts` source through tsx (or ts-jest), whose hooks a thread does not
 * inherit, so the thread registers them before it loads the entry.
 */
export function entryWorker(entryDir: string, name: string, options: WorkerOptions = {}): Worker {
  const ext = path.extname(__filename);
  const file = path.join(entryDir, `${name}${ext}`);
  return ext === '.ts' ? new Worker(`require('tsx/cjs/api').register(); require(${JSON.stringify(file)});`, { ...options, eval: true }) : new Worker(file, options);
}
