import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import { SEARCH_ATTRIBUTES } from '../../src/domain/search-attributes';
import { createLocalEnv, gatewayWorkflows } from '../helpers/temporal';
import { runAdmin } from '../../scripts/admin';
import { chainSignal } from '../../workflows/signals';
import { input, runPayment, scriptedActivities, until, uuid } from './payment-harness';

/**
 * The payment workflow's search attributes on the dev server, where they are registered (the time-skipping
 * server has none): what the Temporal UI can find a payment by, written in as few upserts as the stages
 * it has to show. Its history is recorded for the replay test with the upserts in it.
 */
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createLocalEnv({ searchAttributes: SEARCH_ATTRIBUTES });
}, 120_000);
afterAll(async () => {
  await env?.teardown();
});

type Event = temporal.api.history.v1.IHistoryEvent;

/** Each upsert's attributes, decoded (keyword values), in history order. */
function upserts(events: Event[]): Record<string, string>[] {
  return events
    .filter((e) => e.upsertWorkflowSearchAttributesEventAttributes)
    .map((e) => {
      const fields = e.upsertWorkflowSearchAttributesEventAttributes!.searchAttributes?.indexedFields ?? {};
      return Object.fromEntries(Object.entries(fields).map(([k, p]) => [k, String(defaultPayloadConverter.fromPayload(p))]));
    });
}

/** `npm run admin -- …` against this file's dev server, its output lines in `lines` (emptied first). */
async function adminOn(lines: string[], ...argv: string[]): Promise<number> {
  lines.length = 0;
  const saved = process.env.TEMPORAL_ADDRESS;
  process.env.TEMPORAL_ADDRESS = env.address;
  try {
    return await runAdmin(argv, (l) => lines.push(l));
  } finally {
    if (saved === undefined) delete process.env.TEMPORAL_ADDRESS;
    else process.env.TEMPORAL_ADDRESS = saved;
  }
}

const IDENTITY = { GatewayTicker: 'eth', GatewayCallbackHost: 'shop.example', GatewayPaymentUuid: uuid, GatewayTxidIn: '0xin' };

describe('paymentLifecycle search attributes', () => {
  it('the happy path writes them three times: identity with pending, processing, done', async () => {
    let events: Event[] = [];
    let described: Record<string, unknown> = {};
    const { status } = await runPayment(
      env,
      { requiredConfirmations: 2, confirmations: [{ status: 'confirmed', confirmations: 1 }, { status: 'confirmed', confirmations: 2 }], fates: [{ status: 'pending' }, { status: 'confirmed' }] },
      {
        fallback: '1 hour',
        searchAttributes: true,
        record: 'search-attributes-delivered',
        drive: async (h, calls) => {
          await until(calls, (c) => c.includes('confirmations 1'), 'the first reading');
          await h.signal('chain', { kind: 'due', height: '2' });
          await until(calls, (c) => c.includes('fate pending'), 'the forward');
          await h.signal('chain', { kind: 'forward', height: '3' });
          await h.result();
          events = (await h.fetchHistory()).events ?? [];
          described = (await h.describe()).searchAttributes;
        },
      },
    );
    expect(status.state).toBe('done');
    // The SDK's own upserts beside them: the patches the run took, one upsert each (TemporalChangeVersion, workflows/payment-forward.ts).
    expect(upserts(events)).toEqual([
      { ...IDENTITY, GatewayStage: 'pending' },
      { GatewayStage: 'processing' },
      { TemporalChangeVersion: 'processing-in-forward' },
      { TemporalChangeVersion: 'forward-local-first,processing-in-forward' },
      { GatewayStage: 'done' },
    ]);
    // A deposit read once before it is due and a forward read once before it is mined: 30 events when each
    // hint arrives after the task before it completed (one fallback timer for both waits, a task per wait),
    // fewer when a hint lands inside that task. The happy path's count is bench/pipeline.ts's (c) column.
    expect(events.length).toBeLessThanOrEqual(30);
    expect(described).toMatchObject({ GatewayStage: ['done'], GatewayPaymentUuid: [uuid] });
  }, 60_000);

  it('npm run admin -- show / resend find a payment that continued as new: its newest run answers, not the first one that ended', async () => {
    const calls: string[] = [];
    const taskQueue = `payment-admin-${Math.random().toString(36).slice(2)}`;
    const readings = Array.from({ length: 12 }, () => ({ status: 'confirmed' as const, confirmations: 1 }));
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      ...(await gatewayWorkflows()),
      activities: scriptedActivities({ requiredConfirmations: 3, confirmations: [...readings, { status: 'confirmed', confirmations: 3 }] }, calls),
    });
    const workflowId = `deposit:ethereum:${taskQueue}:0`;
    const lines: string[] = [];
    const admin = (...argv: string[]) => adminOn(lines, ...argv);
    await worker.runUntil(async () => {
      // A small history budget: a few hinted readings and the run continues as new, carrying its state.
      const h = await env.client.workflow.start('paymentLifecycle', { taskQueue, workflowId, args: [input, { fallback: '1 hour', recheck: '1 hour', historyBudget: 20 }] });
      const first = env.client.workflow.getHandle(workflowId, h.firstExecutionRunId);
      const readings = (c: string[]) => c.filter((x) => x === 'confirmations 1').length;
      for (let i = 1; (await first.describe()).status.name === 'RUNNING'; i++) {
        if (i > 12) throw new Error('the first run did not continue as new');
        // Each hint after the reading before it: a hint that reaches the workflow before that reading
        // began is news to no reading, and prompts none (a slow first task took it with the start).
        await until(calls, (c) => readings(c) >= i, `reading ${i}`);
        await h.signal(chainSignal, { kind: 'due', height: String(i) });
        await until(calls, (c) => readings(c) > i, `reading ${i + 1}`);
      }
      expect((await first.describe()).status.name).toBe('CONTINUED_AS_NEW');
      // Visibility lists the runs by the UUID the first run wrote; the newest run is the one the CLI talks to.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const code = await admin('show', uuid);
        if (code === 0 && (JSON.parse(lines.join('\n')) as { execution: string }).execution === 'RUNNING') break;
        if (Date.now() > deadline) throw new Error(`admin show: ${lines.join(' ')}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(JSON.parse(lines.join('\n'))).toMatchObject({ workflowId, execution: 'RUNNING', status: { uuid, state: 'pending', confirmations: 1 } });
      // Nothing to resend yet: refused with the reason, exit 1; never "has ended" nor "requested".
      expect(await admin('resend', uuid)).toBe(1);
      expect(lines).toEqual([`resend refused: payment ${uuid} is pending: its confirmed callback is not written yet, nothing to resend`]);
      for (let i = 20; !calls.includes('confirmations 3'); i++) {
        if (i > 40) throw new Error(`no final reading; calls: ${calls.join(', ')}`);
        const seen = calls.length;
        await h.signal(chainSignal, { kind: 'due', height: String(i) });
        // A hint that reaches the new run before its first reading began prompts none: the next one does.
        await until(calls, (c) => c.length > seen, `reading at ${i}`, 5_000).catch(() => undefined);
      }
      expect(await h.result()).toMatchObject({ state: 'done' });
      expect(await admin('resend', uuid)).toBe(1);
      expect(lines).toEqual([`resend refused: the workflow of payment ${uuid} has ended (COMPLETED); nothing listens for resends`]);
    });
  }, 120_000);

  it('a confirmed callback that has to wait for its next attempt shows sent while it waits', async () => {
    const calls: string[] = [];
    const taskQueue = `payment-sa-${Math.random().toString(36).slice(2)}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      ...(await gatewayWorkflows()),
      activities: scriptedActivities({ confirmed: ['failed', 'delivered'] }, calls),
    });
    const workflowId = `deposit:ethereum:${taskQueue}:0`;
    await worker.runUntil(async () => {
      const h = await env.client.workflow.start('paymentLifecycle', { taskQueue, workflowId, args: [input, { fallback: '1 hour' }] });
      await until(calls, (c) => c.includes('confirmed #1 failed'), 'the first confirmed attempt');
      // The next attempt is 5 minutes away (SPEC 8): the stage the UI shows meanwhile.
      const deadline = Date.now() + 10_000;
      let stage: unknown;
      while (Date.now() < deadline) {
        stage = (await h.describe()).searchAttributes.GatewayStage;
        if (Array.isArray(stage) && stage[0] === 'sent') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(stage).toEqual(['sent']);
      const events = (await h.fetchHistory()).events ?? [];
      expect(upserts(events).flatMap((u) => (u.GatewayStage ? [u.GatewayStage] : []))).toEqual(['pending', 'processing', 'sent']);
      await h.terminate('test over');
    });
  }, 60_000);

  it('a forward held back by a transient condition: listed by GatewayStage = "waiting", its reason in admin show', async () => {
    const calls: string[] = [];
    const taskQueue = `payment-waiting-${Math.random().toString(36).slice(2)}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      ...(await gatewayWorkflows()),
      activities: scriptedActivities({ forwardRefusals: 1000, forwardRefusalPermanent: true }, calls),
    });
    const workflowId = `deposit:ethereum:${taskQueue}:0`;
    const lines: string[] = [];
    await worker.runUntil(async () => {
      const h = await env.client.workflow.start('paymentLifecycle', { taskQueue, workflowId, args: [input, { fallback: '1 hour' }] });
      await until(calls, (c) => c.includes('forward refused'), 'the forward step refused');
      const deadline = Date.now() + 15_000;
      const listed = async () => {
        for await (const wf of env.client.workflow.list({ query: `GatewayStage = "waiting" AND GatewayPaymentUuid = "${uuid}"` })) if (wf.workflowId === workflowId) return true;
        return false;
      };
      while (!(await listed())) {
        if (Date.now() > deadline) throw new Error('not listed as waiting');
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(await adminOn(lines, 'show', uuid)).toBe(0);
      expect(lines[0]).toMatch(/^forward waiting \(InsufficientAmountError\): deposit 1 does not cover gas 2; next try /);
      expect(JSON.parse(lines.slice(1).join('\n'))).toMatchObject({ workflowId, execution: 'RUNNING', status: { state: 'processing', reason: null, waiting: { retries: 1 } } });
      expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual([]);
      await h.terminate('test over');
    });
  }, 60_000);
});
