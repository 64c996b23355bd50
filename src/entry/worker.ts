// Worker-only process (compose service gateway-worker): Temporal worker and per-network watchers.
// Several may run at once on the same task queue: deposit workflows are unique by ID and forwards
// are serialised by a PostgreSQL advisory lock. One with WORKER_TASK_QUEUE serves the networks whose
// deposits run on that queue ({NETWORK}_TASK_QUEUE) and watches only those (src/runtime/task-queues.ts).
import { lowerPriority } from '../runtime/priority';
import { buildServices } from '../runtime/services';
import { startWorkerRuntime } from '../runtime/worker';
import { installQuietRuntime } from '../temporal/worker';
import { runProcess } from './common';

runProcess('worker', (cfg, database) => buildServices(cfg, database), async (services, stops) => {
  // Before the SDK's threads start, so that they take it too.
  lowerPriority(services.cfg.workerNice);
  installQuietRuntime(services.cfg);
  const worker = await startWorkerRuntime(services, {
    address: services.cfg.temporalAddress!,
    depositPollInterval: process.env.DEPOSIT_POLL_INTERVAL || undefined,
  });
  stops.push(() => worker.stop());
  return { networks: worker.serves.networks, taskQueue: worker.serves.taskQueue, nice: services.cfg.workerNice };
});
