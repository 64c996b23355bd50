import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities';

const { databaseTime } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

/**
 * Proves the whole stack answers: the worker picks up a workflow and an activity reaches the database.
 * Used by `npm start` at boot and by the foundation tests.
 */
export async function systemCheck(): Promise<{ databaseTime: string }> {
  return { databaseTime: await databaseTime() };
}
