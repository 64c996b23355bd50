import path from 'node:path';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities';
import { createLocalEnv, createTimeSkippingEnv } from '../helpers/temporal';
import { createTestDatabase } from '../helpers/db';

const workflowsPath = path.resolve(__dirname, '../fixtures/workflows.ts');

describe('real Temporal dev server', () => {
  let env: TestWorkflowEnvironment;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    [env, database] = await Promise.all([createLocalEnv(), createTestDatabase()]);
  });
  afterAll(async () => {
    await env?.teardown();
    await database?.drop();
  });

  it('runs a workflow whose activity reads PostgreSQL to completion', async () => {
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: 'foundation-local',
      workflowsPath,
      activities: createActivities({ db: database.db }),
    });
    const result = await worker.runUntil(
      env.client.workflow.execute('systemCheck', { taskQueue: 'foundation-local', workflowId: `system-check-${Date.now()}` }),
    );
    expect(result.databaseTime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/);
  });
});

describe('time-skipping test server', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await createTimeSkippingEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  it('completes a workflow that sleeps one day in seconds of wall time', async () => {
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: 'foundation-skip',
      workflowsPath,
      activities: {},
    });
    const startedWall = Date.now();
    const startedVirtual = await env.currentTimeMs();
    const result = await worker.runUntil(
      env.client.workflow.execute('sleepOneDay', { taskQueue: 'foundation-skip', workflowId: `sleep-${Date.now()}` }),
    );
    expect(result).toBe('woke');
    expect((await env.currentTimeMs()) - startedVirtual).toBeGreaterThanOrEqual(24 * 3600 * 1000);
    expect(Date.now() - startedWall).toBeLessThan(60_000);
  });
});
