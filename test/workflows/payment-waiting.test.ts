import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { MatchedDeposit, WatchedConfig } from '../../src/detection/watcher';
import { startDepositWorkflows } from '../../src/runtime/worker';
import { DEPOSIT_REORGANISED } from '../../workflows/payment';
import { paymentStatusQuery } from '../../workflows/signals';
import { show } from '../../scripts/admin';
import { gatewayWorkflows } from '../helpers/temporal';
import { input, MINUTE, runPayment, scriptedActivities, until, useTimeSkippingEnv, type Reading } from './payment-harness';

/**
 * Only final facts fail a payment (issue 55, item 3): a forward stopped by a transient condition waits and
 * tries again with backoff, for as long as it lasts, its reason in the query, the Temporal UI and `admin
 * show`; bytes that can never land are re-signed with no limit of plans; a deposit judged reorganised and
 * mined again starts a new lifecycle. On the time-skipping server with scripted activities.
 */
let env: TestWorkflowEnvironment;
useTimeSkippingEnv((e) => (env = e));

describe('a forward stopped by a transient condition waits and tries again', () => {
  it('uneconomic three times in a row (a fee spike: InsufficientAmountError): waits 1, 2, 4 minutes, then forwards; never failed', async () => {
    const { calls, status, firstRunEvents } = await runPayment(
      env,
      { forwardRefusals: 3, forwardRefusalPermanent: true },
      { fallback: '1 hour', record: 'payment-forward-waits-then-lands' },
    );
    // A typed refusal ends the activity at once (no retry inside it): each try is one attempt, then a wait.
    const refused = ['forward refused', 'forward refused', 'forward refused'];
    expect(calls).toEqual(['confirmations 1', 'processing', ...refused, 'forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual([]);
    expect(status).toMatchObject({ state: 'done', txidOut: '0xout1', waiting: null });
    // One timer per wait (1, 2, 4 minutes), none of them the hour-long fallback.
    expect(firstRunEvents.filter((e) => e === 'EVENT_TYPE_TIMER_FIRED')).toHaveLength(3);
  }, 60_000);

  it('a price missing (a plain, retryable error): a few quick tries in the activity, then the workflow waits, and forwards once the price is back', async () => {
    // Three attempts of the forward activity per try: seven refusals are two tries and the first attempt of a third.
    const { calls, status } = await runPayment(env, { forwardRefusals: 7 }, { fallback: '1 hour' });
    expect(calls.filter((c) => c === 'forward refused')).toHaveLength(7);
    expect(calls.slice(-4)).toEqual(['forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual([]);
    expect(status.state).toBe('done');
  }, 120_000);

  it('refused for longer than the history budget: continues as new while waiting, the reason in the query and in admin show, then done', async () => {
    const budget = 40;
    const shown: string[] = [];
    let waitingStatus: unknown;
    const { calls, status, runLengths } = await runPayment(
      env,
      { forwardRefusals: 16, forwardRefusalPermanent: true },
      {
        fallback: '1 hour',
        historyBudget: budget,
        forwardRetryCap: '30 minutes',
        record: 'payment-forward-waits-past-budget',
        drive: async (h, calls) => {
          const firstRun = (await h.describe()).runId;
          // 1, 2, 4, 8, 16 minutes, then every 30: about 3 hours for the first twelve refusals.
          await env.sleep(5 * 60 * MINUTE);
          await until(calls, (c) => c.filter((x) => x === 'forward refused').length >= 12, 'twelve refusals');
          const described = await h.describe();
          expect(described.runId).not.toBe(firstRun);
          waitingStatus = await h.query(paymentStatusQuery);
          await show(h, (l) => shown.push(l));
        },
      },
    );
    expect(waitingStatus).toMatchObject({
      state: 'processing',
      waiting: { type: 'InsufficientAmountError', reason: 'deposit 1 does not cover gas 2', retries: expect.any(Number) },
    });
    expect((waitingStatus as { waiting: { retries: number } }).waiting.retries).toBeGreaterThanOrEqual(11);
    expect(shown[0]).toMatch(/^forward waiting \(InsufficientAmountError\): deposit 1 does not cover gas 2; next try \d{4}-/);
    expect(JSON.parse(shown[1])).toMatchObject({ execution: 'RUNNING', status: { state: 'processing', waiting: { type: 'InsufficientAmountError' } } });
    expect(calls.filter((c) => c === 'forward refused')).toHaveLength(16);
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual([]);
    expect(status).toMatchObject({ state: 'done', waiting: null });
    expect(runLengths.length).toBeGreaterThan(1);
    expect(Math.max(...runLengths)).toBeLessThan(budget + 30);
  }, 180_000);

  it('a txid that belongs to another payment (ForwardCollision, a bug guard) stays final: failed, no callback', async () => {
    const { calls, status } = await runPayment(env, { forwardRefusals: 2, forwardRefusalPermanent: true, forwardRefusalType: 'ForwardCollision' }, { record: 'payment-forward-collision' });
    expect(status).toMatchObject({ state: 'failed', reason: 'forward failed: deposit 1 does not cover gas 2' });
    expect(calls.filter((c) => c.startsWith('confirmed'))).toEqual([]);
  }, 60_000);
});

describe('no limit of plans for evidence-based replacement', () => {
  it('seven plans in a row that can never land (a Solana blockhash expiring each time): re-signed each time, then done', async () => {
    const rounds = 7;
    const fates: Reading[] = [];
    for (let i = 0; i < rounds; i++) fates.push({ status: 'replaceable', at: 2 * i + 1 }, { status: 'replaceable', at: 2 * i + 2 });
    fates.push({ status: 'confirmed' });
    const { calls, status } = await runPayment(env, { fates }, { fallback: '2 minutes', record: 'payment-forward-resigned-seven-times' });
    expect(calls.filter((c) => c === 'forward')).toHaveLength(rounds + 1);
    expect(calls.filter((c) => c === 'discard')).toHaveLength(rounds);
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual([]);
    expect(status).toMatchObject({ state: 'done', txidOut: `0xout${rounds + 1}` });
  }, 120_000);
});

describe('one reading is evidence, never a verdict', () => {
  it('evidence that the forward can never land, read once, then the forward mined: no second plan, done', async () => {
    const { calls, status } = await runPayment(env, { fates: [{ status: 'replaceable', at: 10 }, { status: 'confirmed' }] }, { fallback: '2 minutes', record: 'payment-forward-evidence-then-confirmed' });
    expect(calls).not.toContain('discard');
    expect(calls.filter((c) => c === 'forward')).toHaveLength(1);
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual([]);
    expect(status).toMatchObject({ state: 'done', txidOut: '0xout1' });
  }, 60_000);

  it('the bytes are replaced only on evidence read again at a higher head, on consecutive readings', async () => {
    const fates: Reading[] = [
      { status: 'replaceable', at: 5 },
      { status: 'replaceable', at: 5 }, // the same head: not yet
      { status: 'pending' }, // the evidence did not hold: start over
      { status: 'replaceable', at: 6 },
      { status: 'replaceable', at: 7 }, // a higher head says it again: replace
      { status: 'pending' },
      { status: 'confirmed' },
    ];
    const { calls, status } = await runPayment(env, { fates }, { fallback: '2 minutes', record: 'payment-forward-evidence-must-hold' });
    const discardAt = calls.indexOf('discard');
    expect(calls.filter((c) => c === 'discard')).toHaveLength(1);
    expect(calls.slice(0, discardAt).filter((c) => c.startsWith('fate'))).toHaveLength(5);
    expect(calls.filter((c) => c === 'forward')).toHaveLength(2);
    expect(status).toMatchObject({ state: 'done', txidOut: '0xout2' });
  }, 60_000);

  it('one reorg reading before finality (a lagging or lying node): the deposit goes on when the next reading finds it', async () => {
    const { calls, status } = await runPayment(
      env,
      { confirmations: [{ status: 'reorged', at: 5 }, { status: 'confirmed', confirmations: 1 }] },
      { fallback: '2 minutes', record: 'payment-reorg-reading-then-confirmed' },
    );
    expect(calls.slice(0, 2)).toEqual(['confirmations reorged@5', 'confirmations 1']);
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual([]);
    expect(status.state).toBe('done');
  }, 60_000);
});

describe('the node or the database does not answer: no reading, no verdict', () => {
  it('the forward\'s reading fails: the workflow waits for its fallback and reads again, then lands', async () => {
    const { calls, status } = await runPayment(env, { fates: [{ status: 'pending' }, { status: 'confirmed' }], fateDownFor: 2 }, { fallback: '10 minutes', record: 'payment-forward-reading-down' });
    expect(calls).toEqual(['confirmations 1', 'processing', 'forward', 'fate pending', 'fate down', 'fate down', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
    expect(status.state).toBe('done');
  }, 60_000);
});

describe('a deposit judged reorganised and mined again', () => {
  it('the watcher starts a new lifecycle under the same workflow ID (the judged run ended failed), which forwards it', async () => {
    const calls: string[] = [];
    const taskQueue = `remined-${Math.random().toString(36).slice(2)}`;
    const script = {
      requiredConfirmations: 6,
      confirmations: [
        { status: 'confirmed' as const, confirmations: 2 },
        { status: 'reorged' as const, at: 5 },
        { status: 'reorged' as const, at: 6 },
        { status: 'confirmed' as const, confirmations: 6 },
      ],
    };
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, ...(await gatewayWorkflows()), activities: scriptedActivities(script, calls) });
    const match: MatchedDeposit = {
      deposit: { ...input, txid: `0x${taskQueue}`, index: 0, amount: BigInt(input.amount), blockNumber: 1n },
      config: { id: input.configId } as WatchedConfig,
      confirmations: 1,
    };
    const workflowId = `deposit:${input.network}:0x${taskQueue}:0`;
    await worker.runUntil(async () => {
      await startDepositWorkflows(env.client, taskQueue, [match], '3 minutes');
      const first = env.client.workflow.getHandle(workflowId);
      const firstRun = (await first.describe()).runId;
      const err = await first.result().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(((err as WorkflowFailedError).cause as ApplicationFailure).type).toBe(DEPOSIT_REORGANISED);
      expect(await first.query(paymentStatusQuery)).toMatchObject({ state: 'failed', reason: 'deposit block reorganised out before finality' });
      expect(calls).toContain('markFailed deposit block reorganised out before finality');

      // The same deposit in a new block: the watcher's start makes a new run, which takes the deposit to done.
      await startDepositWorkflows(env.client, taskQueue, [{ ...match, deposit: { ...match.deposit, blockNumber: 7n, blockHash: '0xnew' } }], '3 minutes');
      const again = env.client.workflow.getHandle(workflowId);
      expect((await again.describe()).runId).not.toBe(firstRun);
      expect(await again.result()).toMatchObject({ state: 'done' });
      // A completed lifecycle is not started again by a re-read block.
      const doneRun = (await again.describe()).runId;
      await startDepositWorkflows(env.client, taskQueue, [match], '3 minutes');
      expect(await env.client.workflow.getHandle(workflowId).describe()).toMatchObject({ runId: doneRun, status: { name: 'COMPLETED' } });
    });
    expect(calls.slice(-6)).toEqual(['confirmations 6', 'processing', 'forward', 'fate confirmed', 'snapshot', 'confirmed #1 delivered']);
  }, 120_000);
});
