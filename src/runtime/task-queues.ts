import type { ChainRuntimeConfig } from '../chains/config';
import { ConfigError, type Config } from '../config';

/** What one worker serves: the task queue it polls and the networks whose watcher it runs. */
export interface WorkerAssignment {
  /** The queue this worker polls; its watchers start their networks' deposit workflows on it. */
  taskQueue: string;
  /** The networks whose deposit workflows run on taskQueue: this worker watches them. */
  networks: string[];
  /** The gateway's own queue (TEMPORAL_TASK_QUEUE): the minimum refresh's schedule and the operator's sweeps run there. */
  ownsSchedule: boolean;
}

/** The task queue of a network's deposit workflows: `{NETWORK}_TASK_QUEUE`, else the gateway's own. */
export function depositQueueOf(cfg: Pick<Config, 'taskQueue'>, chains: ChainRuntimeConfig, network: string): string {
  return chains[network]?.taskQueue ?? cfg.taskQueue;
}

/**
 * A worker serves one task queue: WORKER_TASK_QUEUE, else TEMPORAL_TASK_QUEUE. It watches the networks whose deposits
 * run there, so that the hints of a network with a queue of its own come from the worker that runs its deposits,
 * not from one busy with another network's burst. The embedded gateway is one worker: it serves every network on
 * the gateway's queue and refuses a queue of their own, which no process of its would poll.
 */
export function workerAssignment(
  cfg: Pick<Config, 'taskQueue' | 'workerTaskQueue'>,
  chains: ChainRuntimeConfig,
  role: 'worker' | 'embedded',
): WorkerAssignment {
  const networks = Object.keys(chains);
  if (role === 'embedded') {
    const elsewhere =
      cfg.workerTaskQueue !== undefined && cfg.workerTaskQueue !== cfg.taskQueue ? 'worker' : networks.find((n) => depositQueueOf(cfg, chains, n) !== cfg.taskQueue);
    if (elsewhere) {
      throw new ConfigError(`invalid configuration: ${elsewhere.toUpperCase()}_TASK_QUEUE needs worker processes of its own (the production topology); the embedded gateway serves every network on TEMPORAL_TASK_QUEUE`);
    }
    return { taskQueue: cfg.taskQueue, networks, ownsSchedule: true };
  }
  const taskQueue = cfg.workerTaskQueue ?? cfg.taskQueue;
  const served = networks.filter((n) => depositQueueOf(cfg, chains, n) === taskQueue);
  if (taskQueue !== cfg.taskQueue && !served.length) {
    throw new ConfigError(`invalid configuration: WORKER_TASK_QUEUE=${taskQueue} is the task queue of no configured network (set {NETWORK}_TASK_QUEUE=${taskQueue} for the networks it serves)`);
  }
  return { taskQueue, networks: served, ownsSchedule: taskQueue === cfg.taskQueue };
}
