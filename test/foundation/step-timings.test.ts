import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { logger, setLogSink } from '../../src/observability/logger';
import { createWorker } from '../../src/temporal/worker';
import { createLocalEnv } from '../helpers/temporal';

/**
 * At debug level the gateway's worker logs each step's timing (src/temporal/step-timings.ts): a local
 * activity and an activity, run by createWorker's worker on a real dev server, each give one line with the
 * step, its workflow, its kind, its wait and its run time; at info level there is none.
 */
describe("the worker's step timings", () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await createLocalEnv();
  }, 120_000);
  afterAll(async () => {
    await env?.teardown();
  });

  async function run(level: string): Promise<Array<Record<string, unknown>>> {
    const taskQueue = `step-timings-${level}`;
    const lines: string[] = [];
    const previousSink = setLogSink({ write: (l) => void lines.push(l) });
    const previousLevel = logger.level;
    logger.level = level;
    const { worker, connection } = await createWorker({
      address: env.address,
      namespace: env.namespace ?? 'default',
      taskQueue,
      activities: { pause: (ms: number) => new Promise((r) => setTimeout(r, ms)) },
      workflowsPath: path.resolve(__dirname, '../fixtures/sandbox-workflows.ts'),
    });
    try {
      await worker.runUntil(env.client.workflow.execute('twoSteps', { taskQueue, workflowId: `${taskQueue}-${Date.now()}`, args: [150] }));
    } finally {
      logger.level = previousLevel;
      setLogSink(previousSink);
      await connection.close();
    }
    return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'step timing');
  }

  it('logs one line per step at debug level, with its kind, wait and run time', async () => {
    const started = Date.now();
    const steps = await run('debug');
    expect(steps.map((s) => [s.step, s.local, s.attempt])).toEqual([
      ['pause', true, 1],
      ['pause', false, 1],
    ]);
    for (const s of steps) {
      expect(String(s.workflowId)).toMatch(/^step-timings-debug-/);
      expect(s.runMs).toBeGreaterThanOrEqual(145);
      expect(s.waitMs).toBeGreaterThanOrEqual(0);
      expect(s.scheduledAt).toBeGreaterThanOrEqual(started);
      expect(s.failed).toBeUndefined();
    }
  }, 120_000);

  it('logs none at info level', async () => {
    expect(await run('info')).toEqual([]);
  }, 120_000);
});
