import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { DEPOSIT_REORGANISED, HISTORY_BUDGET } from '../../workflows/payment';
import { chainSignal, resendUpdate } from '../../workflows/signals';
import { resend } from '../../scripts/admin';
import { MINUTE, runPayment, until, useTimeSkippingEnv, uuid } from './payment-harness';

/**
 * Every branch of the payment workflow in seconds, on the time-skipping server with scripted activities
 * (test/workflows/payment-harness.ts). Each branch's history is recorded for the replay test.
 */
let env: TestWorkflowEnvironment;
useTimeSkippingEnv((e) => (env = e));

describe('payment workflow: pushed, not polled', () => {
  it('waits on the watcher\'s signals: with an hour-long fallback, a due hint and a forward hint take it to done', async () => {
    const { calls, status, runLengths } = await runPayment(
      env,
      { notifyPending: true, requiredConfirmations: 12, confirmations: [{ status: 'confirmed', confirmations: 3 }, { status: 'confirmed', confirmations: 12 }], fates: [{ status: 'pending' }, { status: 'confirmed' }] },
      {
        fallback: '1 hour',
        record: 'payment-delivered-at-once',
        drive: async (h, calls) => {
          await until(calls, (c) => c.includes('pending #1 delivered') && c.includes('confirmations 3'), 'the first reading and the pending callback');
          await h.signal(chainSignal, { kind: 'due', height: '12' });
          await until(calls, (c) => c.includes('fate pending'), 'the forward\'s first reading');
          await h.signal(chainSignal, { kind: 'forward', height: '13' });
        },
      },
    );
    // The pending attempt runs beside the first reading; from finality on, the table's order.
    expect(calls.slice(0, 2).sort()).toEqual(['confirmations 3', 'pending #1 delivered']);
    expect(calls.slice(2)).toEqual(['confirmations 12', 'processing', 'forward', 'fate pending', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(status.state).toBe('done');
    // The happy path with a pending callback, in one run, within the 50 events.
    expect(runLengths).toHaveLength(1);
    expect(runLengths[0]).toBeLessThanOrEqual(50);
  }, 60_000);

  it('a hint that comes while a reading is under way wakes the next wait (it is not cleared by it)', async () => {
    // The forward's own reading says pending; the block holding the forward is hinted while the forward is
    // still running. The hint must end the wait after that reading at once, not the hour-long fallback.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { calls, status, firstRunEvents } = await runPayment(
      env,
      { fates: [{ status: 'pending' }, { status: 'confirmed' }], forwardGate: () => gate },
      {
        fallback: '1 hour',
        drive: async (h, calls) => {
          await until(calls, (c) => c.includes('forward'), 'the forward activity');
          await h.signal(chainSignal, { kind: 'forward', height: '2' });
          release();
        },
      },
    );
    expect(calls).toEqual(['confirmations 1', 'processing', 'forward', 'fate pending', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(status.state).toBe('done');
    expect(firstRunEvents).not.toContain('EVENT_TYPE_TIMER_FIRED');
    // The forward's first try is a local activity: the hint reaches the workflow in the task after it, whose
    // wait has begun with the fallback timer (one, which the hint leaves running).
    expect(firstRunEvents.filter((e) => e === 'EVENT_TYPE_TIMER_STARTED')).toHaveLength(1);
  }, 60_000);

  it('a forward the chain already holds when the activity reads it (a retried activity re-sent mined bytes): no wait, no second reading', async () => {
    const { calls, status, firstRunEvents } = await runPayment(env, { fates: [{ status: 'confirmed' }] }, { fallback: '1 hour', record: 'payment-forward-confirmed-at-once' });
    expect(calls).toEqual(['confirmations 1', 'processing', 'forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(status.state).toBe('done');
    expect(firstRunEvents).not.toContain('EVENT_TYPE_TIMER_STARTED');
  }, 60_000);

  it('a lost signal only delays: the fallback timer reads the chain itself', async () => {
    const { calls, status } = await runPayment(env, { requiredConfirmations: 2, confirmations: [{ status: 'confirmed', confirmations: 1 }, { status: 'confirmed', confirmations: 2 }] }, { fallback: '10 minutes' });
    expect(calls.slice(0, 2)).toEqual(['confirmations 1', 'confirmations 2']);
    expect(status.state).toBe('done');
  }, 60_000);
});

describe('payment workflow: each step is an effect of the lifecycle table, in its order', () => {
  it('the happy path: readings until final, the forward recording processing (a local activity), the snapshot, the attempt', async () => {
    const { calls, status, firstRunEvents } = await runPayment(env, { requiredConfirmations: 2, confirmations: [{ status: 'confirmed', confirmations: 1 }, { status: 'confirmed', confirmations: 2 }] }, { fallback: '10 minutes' });
    expect(calls).toEqual(['confirmations 1', 'confirmations 2', 'processing', 'forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(status.state).toBe('done');
    // Local activities, one marker each: recordAndEvaluate, two readings, the forward's first try (which records
    // processing: no step of its own), the snapshot, the attempt; and the patches' markers (PROCESSING_IN_FORWARD,
    // FORWARD_LOCAL_FIRST).
    expect(firstRunEvents.filter((e) => e === 'EVENT_TYPE_MARKER_RECORDED')).toHaveLength(8);
    // A first try that ends in seconds needs no activity task (the activity that heartbeats is its fallback).
    expect(firstRunEvents.filter((e) => e === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')).toHaveLength(0);
    expect(firstRunEvents.length).toBeLessThanOrEqual(30);
  }, 60_000);

  it('a first try (local activity) that outlasts its seconds: the activity that heartbeats forwards instead', async () => {
    const { calls, status, firstRunEvents } = await runPayment(env, { forwardStallFirstMs: 9_000 }, { record: 'payment-forward-first-try-timed-out' });
    expect(calls).toEqual(['confirmations 1', 'processing', 'forward stalled', 'forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(status.state).toBe('done');
    expect(firstRunEvents.filter((e) => e === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')).toHaveLength(1);
  }, 60_000);

  it('a forward that fails once (a plain error) is tried again by the activity, processing recorded once', async () => {
    const { calls, status } = await runPayment(env, { forwardRefusals: 1 }, { record: 'payment-forward-retried-after-finality' });
    expect(calls).toEqual(['confirmations 1', 'processing', 'forward refused', 'forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(status.state).toBe('done');
  }, 60_000);

  it('a forward refused as uneconomic twice: no verdict, it waits (1, then 2 minutes) and lands', async () => {
    const { calls, status } = await runPayment(env, { forwardRefusals: 2, forwardRefusalPermanent: true }, { record: 'payment-forward-refused-then-waits' });
    expect(calls.filter((c) => c.startsWith('forward'))).toEqual(['forward refused', 'forward refused', 'forward']);
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual([]);
    expect(status).toMatchObject({ state: 'done', reason: null, waiting: null });
  }, 60_000);

  it('a pending attempt waiting for its time at finality: the pending stage is stopped before processing is recorded', async () => {
    const { calls, status } = await runPayment(
      env,
      { notifyPending: true, requiredConfirmations: 2, pending: ['failed'], confirmations: [{ status: 'confirmed', confirmations: 1 }, { status: 'confirmed', confirmations: 2 }] },
      { fallback: '2 minutes', record: 'payment-pending-waiting-at-finality' },
    );
    expect(calls.filter((c) => c.startsWith('pending'))).toEqual(['pending #1 failed']);
    expect(calls.slice(-6)).toEqual(['confirmations 2', 'processing', 'forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(status.state).toBe('done');
  }, 60_000);
});

describe('payment workflow: every branch', () => {
  it('below the minimum: failed at once, nothing forwarded, no callback', async () => {
    const { calls, status } = await runPayment(env, { notifyPending: true, evaluation: { eligible: false, reason: 'deposit 1 is below the minimum 2' } }, { record: 'payment-below-minimum' });
    expect(calls).toEqual(['markFailed deposit 1 is below the minimum 2']);
    expect(status).toMatchObject({ state: 'failed', reason: 'deposit 1 is below the minimum 2' });
  }, 60_000);

  it('pending withheld while a price is missing: no pending callback, the deposit goes on to done', async () => {
    const { calls, status } = await runPayment(env, { notifyPending: true, evaluation: { eligible: true, evidence: false } }, { record: 'payment-pending-withheld' });
    expect(calls.filter((c) => c.startsWith('pending'))).toEqual([]);
    expect(status.state).toBe('done');
  }, 60_000);

  it('a reorg before finality, read twice at increasing heads: failed, pending stopped, nothing forwarded', async () => {
    const { calls, status, failedAs } = await runPayment(
      env,
      { notifyPending: true, requiredConfirmations: 6, pending: ['failed'], confirmations: [{ status: 'confirmed', confirmations: 2 }, { status: 'reorged', at: 5 }, { status: 'reorged', at: 5 }, { status: 'reorged', at: 6 }] },
      { fallback: '3 minutes', record: 'payment-reorged' },
    );
    // The run ends failed, so that the same deposit mined again starts a new lifecycle (payment-waiting.test.ts).
    expect(failedAs).toBe(DEPOSIT_REORGANISED);
    expect(calls.filter((c) => c.startsWith('confirmations'))).toEqual(['confirmations 2', 'confirmations reorged@5', 'confirmations reorged@5', 'confirmations reorged@6']);
    expect(calls).toContain('markFailed deposit block reorganised out before finality');
    expect(calls).not.toContain('forward');
    expect(status.state).toBe('failed');
    // The pending stage was stopped at the verdict: no attempt after it.
    expect(calls.indexOf('markFailed deposit block reorganised out before finality')).toBeGreaterThan(calls.lastIndexOf(calls.filter((c) => c.startsWith('pending')).pop()!));
  }, 60_000);

  it('a reorg the watcher hints (recheck): read at once, not at the hour-long fallback; confirmed by a reading at a higher head', async () => {
    const { calls, status, firstRunEvents } = await runPayment(
      env,
      { requiredConfirmations: 6, confirmations: [{ status: 'confirmed', confirmations: 2 }, { status: 'reorged', at: 5 }, { status: 'reorged', at: 6 }] },
      {
        fallback: '1 hour',
        record: 'payment-reorged-on-recheck-hint',
        drive: async (h, calls) => {
          await until(calls, (c) => c.includes('confirmations 2'), 'the first reading');
          await h.signal(chainSignal, { kind: 'recheck', height: '5' });
        },
      },
    );
    expect(calls).toEqual(['confirmations 2', 'confirmations reorged@5', 'confirmations reorged@6', 'markFailed deposit block reorganised out before finality']);
    expect(status.state).toBe('failed');
    // The second reorg reading came after the short recheck wait: one timer fired, and no hour passed.
    expect(firstRunEvents.filter((e) => e === 'EVENT_TYPE_TIMER_FIRED')).toHaveLength(1);
  }, 60_000);

  it('a forward re-prepared on evidence seen at two heads, then landed', async () => {
    const { calls, status } = await runPayment(
      env,
      { fates: [{ status: 'replaceable', at: 5 }, { status: 'replaceable', at: 6 }, { status: 'confirmed' }] },
      { fallback: '2 minutes', record: 'payment-forward-reprepared' },
    );
    expect(calls.filter((c) => c === 'forward')).toHaveLength(2);
    expect(calls.filter((c) => c === 'discard')).toHaveLength(1);
    expect(status).toMatchObject({ state: 'done', txidOut: '0xout2' });
  }, 60_000);

  it('a forward the watcher saw dropped (another transaction took its nonce): read at once, re-prepared once a higher head agrees, landed', async () => {
    const { calls, status, firstRunEvents } = await runPayment(
      env,
      { fates: [{ status: 'pending' }, { status: 'replaceable', at: 5 }, { status: 'replaceable', at: 6 }, { status: 'confirmed' }] },
      {
        fallback: '1 hour',
        record: 'payment-forward-dropped-hint',
        drive: async (h, calls) => {
          await until(calls, (c) => c.includes('fate pending'), 'the forward\'s first reading');
          await h.signal(chainSignal, { kind: 'dropped', height: '5' });
        },
      },
    );
    expect(calls).toEqual(['confirmations 1', 'processing', 'forward', 'fate pending', 'fate replaceable', 'fate replaceable', 'discard', 'forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(status).toMatchObject({ state: 'done', txidOut: '0xout2' });
    // Only the short wait before the reading at a higher head fired; no hour-long fallback.
    expect(firstRunEvents.filter((e) => e === 'EVENT_TYPE_TIMER_FIRED')).toHaveLength(1);
  }, 60_000);

  it('a forward failed on chain: recorded, no second plan, no callback', async () => {
    const { calls, status } = await runPayment(env, { fates: [{ status: 'pending' }, { status: 'failed', reason: 'reverted' }] }, { fallback: '2 minutes', record: 'payment-forward-failed' });
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual(['markFailed forward 0xout1 failed: reverted']);
    expect(calls.filter((c) => c.startsWith('confirmed'))).toEqual([]);
    expect(status.state).toBe('failed');
  }, 60_000);

  it('six attempts, then a resend (npm run admin -- resend): refused with the reason before the sixth, queued after, delivered', async () => {
    const refusals: string[] = [];
    const answers: string[] = [];
    const { calls, status } = await runPayment(
      env,
      { confirmed: ['failed', 'failed', 'failed', 'failed', 'failed', 'failed', 'delivered'] },
      {
        record: 'payment-six-attempts-then-resend',
        drive: async (h, calls) => {
          await until(calls, (c) => c.includes('confirmed #1 failed'), 'the first confirmed attempt');
          await h.executeUpdate(resendUpdate).catch((e: unknown) => {
            if (e instanceof WorkflowUpdateFailedError) refusals.push(String((e.cause as Error).message));
          });
          // The operator's command says the same, and exits 1: nothing was queued.
          expect(await resend(h, uuid, (l) => answers.push(l))).toBe(1);
          // Let the six attempts run (time skips while the result is awaited), then ask again.
          await env.sleep(5 * 60 * MINUTE);
          await until(calls, (c) => c.includes('confirmed #6 failed'), 'the sixth attempt');
          expect(await resend(h, uuid, (l) => answers.push(l))).toBe(0);
        },
      },
    );
    expect(refusals).toEqual([expect.stringMatching(/automatic attempts \(1 of 6 made\)/)]);
    expect(answers).toEqual([`resend refused: ${refusals[0]}`, `resend queued for payment ${uuid}: attempt 7 goes out now`]);
    expect(calls.filter((c) => c.startsWith('confirmed'))).toEqual([1, 2, 3, 4, 5, 6].map((n) => `confirmed #${n} failed`).concat('confirmed #7 delivered'));
    expect(status.state).toBe('done');
  }, 120_000);

  it('six attempts and no resend within the window: the workflow ends at sent, undelivered', async () => {
    const { calls, status } = await runPayment(env, { confirmed: ['failed'] }, { resendWindow: '1 day', record: 'payment-resend-window-closed' });
    expect(calls.filter((c) => c.startsWith('confirmed'))).toEqual([1, 2, 3, 4, 5, 6].map((n) => `confirmed #${n} failed`));
    expect(status).toMatchObject({ state: 'sent', delivery: { confirmed: { attempts: 6, state: 'exhausted' } } });
  }, 60_000);
});

describe('payment workflow: bounded history', () => {
  it('a node down for a day: each failed reading waits for the fallback, the runs stay bounded, the deposit completes', async () => {
    const { calls, status, runLengths } = await runPayment(
      env,
      { requiredConfirmations: 2, nodeDownFor: (24 * 60) / 5, confirmations: [{ status: 'confirmed', confirmations: 2 }] },
      { record: 'payment-node-down-a-day' },
    );
    expect(calls.filter((c) => c === 'confirmations down')).toHaveLength((24 * 60) / 5);
    expect(status.state).toBe('done');
    expect(Math.max(...runLengths)).toBeLessThan(150);
  }, 300_000);

  it(`48 hours of waiting for finality, a forward stuck for three days, six attempts and a resend: every run stays under ${HISTORY_BUDGET + 50} events`, async () => {
    // One reading per 15-minute fallback for 48 h, then three days with the forward in the mempool (the
    // production fallback is 5 minutes: the day with the node down above runs on it; here a third of the
    // readings keeps the test short, and still over 20 runs).
    const waiting = Array.from({ length: (48 * 60) / 15 }, () => ({ status: 'confirmed' as const, confirmations: 1 }));
    const stuck = Array.from({ length: (3 * 24 * 60) / 15 }, () => ({ status: 'pending' as const }));
    const lines: string[] = [];
    const { calls, status, runLengths } = await runPayment(
      env,
      {
        notifyPending: true,
        requiredConfirmations: 6,
        pending: ['failed'],
        confirmations: [...waiting, { status: 'confirmed', confirmations: 6 }],
        fates: [...stuck, { status: 'confirmed' }],
        confirmed: ['failed', 'failed', 'failed', 'failed', 'failed', 'failed', 'delivered'],
      },
      {
        fallback: '15 minutes',
        record: 'payment-48-hours-then-resend',
        drive: async (h, calls) => {
          // Five days pass (48 h, three days stuck, the six attempts' 3 h 50 min) within the 30-day resend window.
          await env.sleep(5 * 24 * 60 * MINUTE + 5 * 60 * MINUTE);
          await until(calls, (c) => c.includes('confirmed #6 failed'), 'the sixth attempt', 60_000);
          expect(await resend(h, uuid, (l) => lines.push(l))).toBe(0);
        },
      },
    );
    expect(calls.filter((c) => c.startsWith('confirmations'))).toHaveLength(waiting.length + 1);
    expect(calls.filter((c) => c === 'fate pending')).toHaveLength(stuck.length);
    // The pending stage ran its six attempts across runs, and stopped at finality.
    expect(calls.filter((c) => c.startsWith('pending'))).toHaveLength(6);
    // The resend reached the run that was current then, many runs after the first: attempt 7, delivered.
    expect(lines).toEqual([`resend queued for payment ${uuid}: attempt 7 goes out now`]);
    expect(calls.filter((c) => c.startsWith('confirmed'))).toEqual([1, 2, 3, 4, 5, 6].map((n) => `confirmed #${n} failed`).concat('confirmed #7 delivered'));
    expect(status).toMatchObject({ state: 'done', delivery: { confirmed: { attempts: 7, state: 'delivered' } } });
    expect(runLengths.length).toBeGreaterThan(20);
    expect(Math.max(...runLengths)).toBeLessThan(150);
  }, 300_000);
});
