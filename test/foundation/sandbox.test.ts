import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createWorker } from '../../src/temporal/worker';
import { createTimeSkippingEnv } from '../helpers/temporal';

/**
 * The gateway's workers run workflow code in a sandbox prepared by workflows/preload.ts (the bundler's
 * preloadModules, wired in createWorker): stack traces keep 3 frames, which keeps the SDK's per-promise stack
 * capture cheap (bench/sandbox.ts). Here a workflow bundled by createWorker, on a real test server, sees it.
 */
describe('workflow sandbox of the gateway worker', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await createTimeSkippingEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  it('keeps 3 frames of an error made in workflow code', async () => {
    const taskQueue = 'sandbox-probe';
    const { worker, connection } = await createWorker({
      address: env.address,
      namespace: env.namespace ?? 'default',
      taskQueue,
      activities: {},
      workflowsPath: path.resolve(__dirname, '../fixtures/sandbox-workflows.ts'),
    });
    try {
      const probe = await worker.runUntil(env.client.workflow.execute('stackProbe', { taskQueue, workflowId: `stack-probe-${Date.now()}` }));
      // The probe's own frame and the SDK's two below it: the workflow function is called 3 deep at least.
      expect(probe).toEqual({ frames: 3, limit: 3 });
    } finally {
      await connection.close();
    }
  }, 120_000);
});
