import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import { SEARCH_ATTRIBUTES } from '../../src/domain/search-attributes';
import { workflowsEntry } from '../../src/temporal/worker';
import { createLocalEnv } from '../helpers/temporal';
import { input, runPayment, scriptedActivities, until, uuid } from './payment-harness';

/**
 * paymentLifecycle's search attributes on the dev server, where they are registered (the time-skipping
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

const IDENTITY = { GatewayTicker: 'eth', GatewayCallbackHost: 'shop.example', GatewayPaymentUuid: uuid, GatewayTxidIn: '0xin' };

describe('paymentLifecycle search attributes', () => {
  it('the happy path writes them three times: identity with pending, processing, done; no patch markers', async () => {
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
    expect(upserts(events)).toEqual([{ ...IDENTITY, GatewayStage: 'pending' }, { GatewayStage: 'processing' }, { GatewayStage: 'done' }]);
    expect(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toEqual([]);
    // paymentWorkflow's happy path took 32 events (bench/pipeline.ts): two patch markers, four upserts fewer, one local activity fewer.
    expect(events.length).toBeLessThanOrEqual(25);
    expect(described).toMatchObject({ GatewayStage: ['done'], GatewayPaymentUuid: [uuid] });
  }, 60_000);

  it('a confirmed callback that has to wait for its next attempt shows sent while it waits', async () => {
    const calls: string[] = [];
    const taskQueue = `payment-sa-${Math.random().toString(36).slice(2)}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: workflowsEntry(),
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
      expect(upserts(events).map((u) => u.GatewayStage)).toEqual(['pending', 'processing', 'sent']);
      await h.terminate('test over');
    });
  }, 60_000);
});

