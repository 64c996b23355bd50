import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { chainSignal } from '../../workflows/signals';
import { createTimeSkippingEnv } from '../helpers/temporal';
import { runPayment, until } from './payment-harness';

/**
 * paymentLifecycle started as the watcher starts a deposit it recorded below its due height
 * (DepositInput.dueLater), on the time-skipping server with scripted activities
 * (test/workflows/payment-harness.ts). Each branch's history is recorded for the replay test.
 */
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
}, 120_000);
afterAll(async () => {
  await env?.teardown();
});

const EventType = temporal.api.enums.v1.EventType;

describe('payment workflow: a deposit the watcher recorded below its due height (input.dueLater) waits for its signal first', () => {
  const waiting = async (h: WorkflowHandle) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const events = (await h.fetchHistory()).events ?? [];
      if (events.some((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED)) return;
      if (Date.now() > deadline) throw new Error('timed out waiting for the fallback timer');
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('no reading until the due hint: then one step reads, forwards and delivers; the fallback never fires', async () => {
    const { calls, status, dueSteps, firstRunEvents } = await runPayment(
      env,
      { notifyPending: true, requiredConfirmations: 12, confirmations: [{ status: 'confirmed', confirmations: 12 }] },
      {
        fallback: '1 hour',
        dueLater: true,
        record: 'payment-due-later-hinted',
        drive: async (h, calls) => {
          await until(calls, (c) => c.includes('pending #1 delivered'), 'the pending callback');
          // Parked on the fallback timer with the pending callback sent and no reading made.
          await waiting(h);
          expect(calls).toEqual(['pending #1 delivered']);
          await h.signal(chainSignal, { kind: 'due', height: '12' });
        },
      },
    );
    expect(calls).toEqual(['pending #1 delivered', 'confirmations 12', 'markProcessing', 'forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(dueSteps).toBe(1);
    expect(status.state).toBe('done');
    expect(firstRunEvents).not.toContain('EVENT_TYPE_TIMER_FIRED');
    // recordAndEvaluate, the pending snapshot and attempt, the due reading, the confirmed attempt: no first reading.
    expect(firstRunEvents.filter((e) => e === 'EVENT_TYPE_MARKER_RECORDED')).toHaveLength(4);
  }, 60_000);

  it('a due hint already in the history before the run\'s first task counts: no wait for the fallback', async () => {
    const { calls, status, firstRunEvents } = await runPayment(
      env,
      { requiredConfirmations: 3, confirmations: [{ status: 'confirmed', confirmations: 3 }] },
      { fallback: '1 hour', dueLater: true, hintAtStart: { kind: 'due', height: '3' }, record: 'payment-due-later-hint-before-start' },
    );
    expect(calls).toEqual(['confirmations 3', 'markProcessing', 'forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(status.state).toBe('done');
    expect(firstRunEvents).not.toContain('EVENT_TYPE_TIMER_STARTED');
  }, 60_000);

  it('a due hint that never comes only delays: the fallback timer reads, and reads again until final', async () => {
    const { calls, status, firstRunEvents } = await runPayment(
      env,
      { requiredConfirmations: 3, confirmations: [{ status: 'confirmed', confirmations: 2 }, { status: 'confirmed', confirmations: 3 }] },
      { fallback: '10 minutes', dueLater: true, record: 'payment-due-later-hint-lost' },
    );
    expect(calls).toEqual(['confirmations 2', 'confirmations 3', 'markProcessing', 'forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(status.state).toBe('done');
    expect(firstRunEvents.filter((e) => e === 'EVENT_TYPE_TIMER_FIRED')).toHaveLength(2);
  }, 60_000);

  it('a reorg hint before finality: the reading it starts is the first one, and a second one at a higher head decides', async () => {
    const { calls, status } = await runPayment(
      env,
      { requiredConfirmations: 12, confirmations: [{ status: 'reorged', at: 5 }, { status: 'reorged', at: 6 }] },
      {
        fallback: '1 hour',
        dueLater: true,
        drive: async (h) => {
          await waiting(h);
          await h.signal(chainSignal, { kind: 'recheck', height: '5' });
        },
      },
    );
    expect(calls.slice(0, 2)).toEqual(['confirmations reorged@5', 'confirmations reorged@6']);
    expect(status).toMatchObject({ state: 'failed', reason: 'deposit block reorganised out before finality' });
  }, 60_000);

  it('paymentWorkflow, the earlier type, reads first whatever its input says', async () => {
    const { calls, status } = await runPayment(
      env,
      { requiredConfirmations: 2, confirmations: [{ status: 'confirmed', confirmations: 1 }, { status: 'confirmed', confirmations: 2 }] },
      { fallback: '10 minutes', dueLater: true, type: 'paymentWorkflow', searchAttributes: false },
    );
    expect(calls.slice(0, 2)).toEqual(['confirmations 1', 'confirmations 2']);
    expect(status.state).toBe('done');
  }, 60_000);
});
