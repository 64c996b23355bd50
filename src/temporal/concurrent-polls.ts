import type { Worker } from '@temporalio/worker';

/**
 * Polls of the SDK's core kept outstanding at once, per kind (workflow activations, activity tasks with the
 * local ones). The TypeScript worker asks core for the next activation or task only once the one before has
 * come back through the process's event loop: when a block makes hundreds of deposits due, each of their
 * steps waited for a turn of a saturated main thread just to be handed over. Core hands each outstanding
 * poll its own item, and never a second activation of a run before the first is answered.
 * Figures: docs/decisions/0021-concurrent-core-polls.md.
 */
export const CORE_POLLS_AT_ONCE = 4;

type PollLoop = (poll: () => Promise<unknown>) => unknown;

/**
 * What `poll` yields, `n` calls outstanding at once, in the order they come back. Once core says it shuts
 * down (ShutdownError, to every outstanding poll), the others are let come back and that error is thrown.
 */
export async function* pollsAtOnce<T>(poll: () => Promise<T>, n: number): AsyncGenerator<T> {
  type Settled = [number, { value: T } | { error: unknown }];
  const outstanding = new Map<number, Promise<Settled>>();
  let next = 0;
  let shutdown: Error | undefined;
  const start = () => {
    const id = next++;
    outstanding.set(id, poll().then((value): Settled => [id, { value }], (error: unknown): Settled => [id, { error }]));
  };
  for (let i = 0; i < Math.max(1, n); i++) start();
  while (outstanding.size > 0) {
    const [id, settled] = await Promise.race(outstanding.values());
    outstanding.delete(id);
    if ('error' in settled) {
      if (settled.error instanceof Error && settled.error.name === 'ShutdownError') {
        shutdown ??= settled.error;
        continue;
      }
      throw settled.error;
    }
    if (!shutdown) start();
    yield settled.value;
  }
  if (shutdown) throw shutdown;
}

/**
 * Gives the worker's activation and activity-task polls `n` outstanding calls each, through the SDK's private
 * poll loop (@temporalio/worker 1.24); where that loop is not found, the worker keeps its own (false).
 */
export function pollCoreConcurrently(worker: Worker, n = CORE_POLLS_AT_ONCE): boolean {
  const w = worker as unknown as Record<string, unknown> & { pollLoop$?: PollLoop };
  const streams = ['workflowPoll$', 'activityPoll$'];
  const ownLoop = w.pollLoop$;
  if (typeof ownLoop !== 'function' || streams.some((s) => typeof w[s] !== 'function')) return false;
  // The SDK's loop, fed from the outstanding polls: it ends as before, on core's own ShutdownError.
  const concurrent: PollLoop = (poll) => {
    const polled = pollsAtOnce(poll, n);
    return ownLoop.call(worker, async () => (await polled.next()).value);
  };
  for (const name of streams) {
    const own = (w[name] as () => unknown).bind(worker);
    w[name] = () => {
      const loop = w.pollLoop$;
      w.pollLoop$ = concurrent;
      try {
        return own();
      } finally {
        w.pollLoop$ = loop;
      }
    };
  }
  return true;
}
