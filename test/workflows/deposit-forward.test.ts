import fs from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { DepositInput, ForwardFate } from '../../activities/deposit';
import { SEARCH_ATTRIBUTES } from '../../src/domain/search-attributes';
import { createLocalEnv, gatewayWorkflows } from '../helpers/temporal';

/**
 * The deposit workflow's forward stage against scripted chain readings (the activities stand in for the
 * chain; the workflow, its timers and its history are real, on the Temporal dev server). A reading is what
 * the chain said at one moment; every activity that reads the chain consumes one, as the real ones do.
 * Rules: one reading decides each step (a later, different reading never turns a verdict around), and
 * bytes are replaced only when the evidence holds on two consecutive readings at increasing heights.
 */
type Reading = { status: 'pending' } | { status: 'confirmed' } | { status: 'failed'; reason: string } | { status: 'replaceable'; at: number };

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createLocalEnv({ searchAttributes: SEARCH_ATTRIBUTES });
}, 120_000);
afterAll(async () => {
  await env?.teardown();
});

const input: DepositInput = {
  configId: '00000000-0000-4000-8000-000000000001', network: 'ethereum', ticker: 'eth', txid: '0xin', index: -1,
  recipient: '0x0000000000000000000000000000000000000001', amount: '1000', blockNumber: '1', blockHash: '0xblock',
};

/**
 * Runs one deposit through the workflow with the chain answering `script` in order (the last reading
 * repeats). Its history replays against the workflow code at once; with RECORD_HISTORIES=1 it is also
 * written to test/fixtures/histories/`record`.json, which test/foundation/replay.test.ts replays for good.
 */
type Confirmation = { status: 'confirmed'; confirmations: number } | { status: 'reorged'; at: number };

async function run(script: Reading[], record: string, confirmations: Confirmation[] = [{ status: 'confirmed', confirmations: 1 }]) {
  const calls: string[] = [];
  const confirm = (): Confirmation => (confirmations.length > 1 ? confirmations.shift()! : confirmations[0]);
  let plans = 0;
  const read = (): Reading => (script.length > 1 ? script.shift()! : script[0]);
  const uuid = 'a1b2c3d4-0000-4000-8000-000000000001';
  const activities = {
    recordDeposit: async () => ({
      uuid, ticker: 'eth', network: 'ethereum', notifyPending: false, requiredConfirmations: 1,
      callbackHost: 'shop.example', txidIn: '0xin', result: 'pending', txidOut: null,
    }),
    evaluate: async () => ({ eligible: true, evidence: true }),
    confirmations: async () => {
      const c = confirm();
      calls.push(`confirmations ${c.status}`);
      return c.status === 'reorged' ? { status: 'reorged', confirmations: 0, observedAt: String(c.at) } : c;
    },
    markProcessing: async () => true,
    markFailed: async (_u: string, reason: string) => {
      calls.push(`markFailed ${reason}`);
      return true;
    },
    forward: async () => {
      calls.push('forward');
      return { txidOut: `0xout${++plans}` };
    },
    forwardFate: async (): Promise<ForwardFate> => {
      const r = read();
      calls.push(`read ${r.status}`);
      const txidOut = `0xout${plans}`;
      if (r.status === 'replaceable') return { status: 'replaceable', txidOut, reason: 'nonce taken', observedAt: String(r.at) };
      return { ...r, txidOut } as ForwardFate;
    },
    // The two readings of the code before the forward-fate-once patch, for the same scripted chain.
    forwardStatus: async () => {
      const r = read();
      calls.push(`read ${r.status}`);
      return r.status === 'replaceable' ? 'failed' : r.status;
    },
    forwardFailure: async () => {
      const r = read();
      calls.push(`read ${r.status}`);
      if (r.status === 'replaceable') return { reason: 'nonce taken', reprepare: true };
      return { reason: r.status === 'failed' ? r.reason : `forward is ${r.status}`, reprepare: false };
    },
    discardForward: async () => {
      calls.push('discard');
      return true;
    },
    confirmedSnapshot: async () => {
      calls.push('snapshot');
      return { uuid, coin: 'eth', txid_out: `0xout${plans}` };
    },
    storeConfirmedSnapshot: async (i: { snapshot: unknown }) => i.snapshot,
    deliverCallbackAttempt: async () => {
      calls.push('callback');
      return { outcome: 'delivered', status: 200, error: null, nextTry: null };
    },
  };
  const taskQueue = `deposit-forward-${Math.random().toString(36).slice(2)}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, ...(await gatewayWorkflows()), activities });
  const workflowId = `deposit:ethereum:${taskQueue}:0`;
  const status = await worker.runUntil(
    env.client.workflow.execute('depositWorkflow', { taskQueue, workflowId, args: [input, { pollInterval: '50 milliseconds' }] }),
  );
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  await Worker.runReplayHistory(await gatewayWorkflows(), history, workflowId);
  if (process.env.RECORD_HISTORIES === '1') {
    fs.writeFileSync(path.resolve(__dirname, '../fixtures/histories', `${record}.json`), `${historyToJSON(history)}\n`);
  }
  return { calls, status: status as { state: string; reason: string | null; txidOut: string | null } };
}

describe('deposit workflow: a forward\'s fate', () => {
  it('one reading decides: evidence read once and then a confirmed forward ends confirmed, never failed', async () => {
    const { calls, status } = await run([{ status: 'replaceable', at: 10 }, { status: 'confirmed' }], 'deposit-forward-evidence-then-confirmed');
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual([]);
    expect(calls).not.toContain('discard');
    expect(calls.filter((c) => c === 'forward')).toHaveLength(1);
    expect(calls).toContain('snapshot');
    expect(status.state).toBe('done');
  }, 60_000);

  it('replaces the bytes only on evidence seen again at a higher block, consecutively', async () => {
    const { calls, status } = await run([
      { status: 'replaceable', at: 5 },
      { status: 'replaceable', at: 5 }, // the same block: not yet
      { status: 'pending' }, // the evidence did not hold: start over
      { status: 'replaceable', at: 6 },
      { status: 'replaceable', at: 7 }, // a new block says it again: replace
      { status: 'pending' },
      { status: 'confirmed' },
    ], 'deposit-forward-replaced');
    const discardAt = calls.indexOf('discard');
    expect(calls.filter((c) => c === 'discard')).toHaveLength(1);
    expect(calls.slice(0, discardAt).filter((c) => c.startsWith('read'))).toHaveLength(5);
    expect(calls.filter((c) => c === 'forward')).toHaveLength(2);
    expect(status).toMatchObject({ state: 'done', txidOut: '0xout2' });
  }, 60_000);

  it('a forward that failed on chain is recorded as failed, with no second plan and no callback', async () => {
    const { calls, status } = await run([{ status: 'pending' }, { status: 'failed', reason: 'reverted' }], 'deposit-forward-failed');
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual(['markFailed forward 0xout1 failed: reverted']);
    expect(calls).not.toContain('discard');
    expect(calls).not.toContain('callback');
    expect(status.state).toBe('failed');
  }, 60_000);
});

describe('deposit workflow: a reorg before finality', () => {
  it('one reorg reading (a lagging or lying node) is no verdict: the deposit goes on when the next reading finds it', async () => {
    const { calls, status } = await run([{ status: 'confirmed' }], 'deposit-reorg-reading-then-confirmed', [
      { status: 'reorged', at: 5 },
      { status: 'confirmed', confirmations: 1 },
    ]);
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual([]);
    expect(status.state).toBe('done');
  }, 60_000);

  it('fails the payment, with no forward, when consecutive readings at increasing heads say so', async () => {
    const { calls, status } = await run([{ status: 'confirmed' }], 'deposit-reorged', [
      { status: 'reorged', at: 5 },
      { status: 'reorged', at: 5 }, // the same head: not yet
      { status: 'reorged', at: 6 },
    ]);
    expect(calls.filter((c) => c.startsWith('confirmations'))).toHaveLength(3);
    expect(calls.filter((c) => c.startsWith('markFailed'))).toEqual(['markFailed deposit block reorganised out before finality']);
    expect(calls).not.toContain('forward');
    expect(status.state).toBe('failed');
  }, 60_000);
});
