import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleHandle } from '@temporalio/client';

/** One schedule per namespace; operators find, pause and trigger it by this ID in the Temporal UI. */
export const MINIMUM_SCHEDULE_ID = 'minimum-refresh';

/**
 * Creates the `minimum-refresh` schedule, or brings an existing one to this interval and task queue
 * (its paused state and note stay as the operator left them). Every worker calls this at start, and a
 * refresh runs at once (unless paused, or one is running), so that after a restart the catalog has
 * current figures without waiting one interval.
 */
export async function ensureMinimumSchedule(client: Client, opts: { taskQueue: string; everyMs: number }): Promise<ScheduleHandle> {
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'minimumRefresh',
    workflowId: MINIMUM_SCHEDULE_ID,
    taskQueue: opts.taskQueue,
    workflowRunTimeout: '5 minutes',
  };
  const spec = { intervals: [{ every: opts.everyMs }] };
  // Refreshes missed while the cluster was down are not worth replaying; the next one is.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' };
  try {
    return await client.schedule.create({ scheduleId: MINIMUM_SCHEDULE_ID, spec, action, policies, state: { triggerImmediately: true } });
  } catch (e) {
    if (!(e instanceof ScheduleAlreadyRunning)) throw e;
  }
  const handle = client.schedule.getHandle(MINIMUM_SCHEDULE_ID);
  const current = await handle.describe();
  const every = current.spec.intervals?.[0]?.every;
  const queue = current.action.type === 'startWorkflow' ? current.action.taskQueue : undefined;
  if (every !== opts.everyMs || current.spec.intervals?.length !== 1 || queue !== opts.taskQueue) {
    await handle.update((prev) => ({ ...prev, spec, action, policies, state: { paused: prev.state.paused, note: prev.state.note } }));
  }
  if (!current.state.paused) await handle.trigger(ScheduleOverlapPolicy.SKIP);
  return handle;
}
