import fs from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { DepositInput, ForwardFate } from '../../activities/deposit';
import { DEPOSIT_REORGANISED, type Carry, type PaymentWorkflowOptions } from '../../workflows/payment';
import { paymentStatusQuery } from '../../workflows/signals';
import { createTimeSkippingEnv, gatewayWorkflows } from '../helpers/temporal';

/**
 * The payment workflow against scripted activities on the time-skipping server: the workflow, its timers,
 * signals, updates and history are real; the activities stand in for the chain, the database and the
 * merchant. Each reading consumes one scripted answer (the last one repeats).
 */
export type Confirmation = { status: 'confirmed'; confirmations: number } | { status: 'reorged'; at: number };
export type Reading = { status: 'pending' } | { status: 'confirmed' } | { status: 'failed'; reason: string } | { status: 'replaceable'; at: number };
export type Attempt = 'delivered' | 'failed';

export interface Script {
  notifyPending?: boolean;
  requiredConfirmations?: number;
  evaluation?: { eligible: true; evidence: boolean } | { eligible: false; reason: string };
  confirmations?: Confirmation[];
  /** The node does not answer the first this many confirmation readings (each one fails for good). */
  nodeDownFor?: number;
  fates?: Reading[];
  /** The node does not answer the first this many readings of the forward's fate made by the workflow. */
  fateDownFor?: number;
  /** Merchant answers per attempt, pending and confirmed stages each in their own list. */
  pending?: Attempt[];
  confirmed?: Attempt[];
  /** Holds the forward activity until it resolves (a test sends hints meanwhile). */
  forwardGate?: () => Promise<void>;
  /** The first forward call takes this long (real time; its result is then discarded by a timed-out local activity). */
  forwardStallFirstMs?: number;
  /**
   * The first this many forward attempts throw: a plain (retryable) error, as a price missing; with
   * forwardRefusalPermanent a nonRetryable ApplicationFailure of type forwardRefusalType (default
   * InsufficientAmountError, as a fee spike that makes the forward look uneconomic).
   */
  forwardRefusals?: number;
  forwardRefusalPermanent?: boolean;
  forwardRefusalType?: string;
}

export const MINUTE = 60_000;

/** One time-skipping server for the test file, handed to `set` once it is up; torn down after the file. */
export function useTimeSkippingEnv(set: (env: TestWorkflowEnvironment) => void): void {
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await createTimeSkippingEnv();
    set(env);
  }, 120_000);
  afterAll(async () => {
    await env?.teardown();
  });
}

export const input: DepositInput = {
  configId: '00000000-0000-4000-8000-000000000001', network: 'ethereum', ticker: 'eth', txid: '0xin', index: -1,
  recipient: '0x0000000000000000000000000000000000000001', amount: '1000', blockNumber: '1', blockHash: '0xblock',
};
export const uuid = 'a1b2c3d4-0000-4000-8000-000000000001';

const EventType = temporal.api.enums.v1.EventType;

function next<T>(list: T[]): T {
  return list.length > 1 ? list.shift()! : list[0];
}

export function scriptedActivities(script: Script, calls: string[]) {
  const confirmations = [...(script.confirmations ?? [{ status: 'confirmed', confirmations: script.requiredConfirmations ?? 1 }])];
  const fates = [...(script.fates ?? [{ status: 'confirmed' }])];
  const answers = { pending: [...(script.pending ?? ['delivered'])], confirmed: [...(script.confirmed ?? ['delivered'])] };
  let plans = 0;
  /** The payment row's pending → processing, made once (by the forward's step, or by the step of its own in older histories). */
  let processing = false;
  const markProcessing = () => {
    if (!processing) calls.push('processing');
    processing = true;
  };
  const fate = (): ForwardFate => {
    const r = next(fates);
    calls.push(`fate ${r.status}`);
    const txidOut = `0xout${plans}`;
    if (r.status === 'replaceable') return { status: 'replaceable', txidOut, reason: 'nonce taken', observedAt: String(r.at) };
    return { ...r, txidOut } as ForwardFate;
  };
  const snapshot = () => {
    calls.push('snapshot');
    return { uuid, coin: 'eth', txid_out: `0xout${plans}` };
  };
  const acts = {
    recordAndEvaluate: async () => ({
      payment: {
        uuid, ticker: 'eth', network: 'ethereum', notifyPending: script.notifyPending ?? false, requiredConfirmations: script.requiredConfirmations ?? 1,
        callbackHost: 'shop.example', txidIn: '0xin', result: 'pending', txidOut: null,
      },
      evaluation: script.evaluation ?? { eligible: true, evidence: true },
    }),
    confirmations: async () => {
      if ((script.nodeDownFor ?? 0) > 0) {
        script.nodeDownFor!--;
        calls.push('confirmations down');
        throw ApplicationFailure.nonRetryable('node not reachable: fetch failed', 'NodeUnavailable');
      }
      const c = next(confirmations);
      calls.push(c.status === 'reorged' ? `confirmations reorged@${c.at}` : `confirmations ${c.confirmations}`);
      return c.status === 'reorged' ? { status: 'reorged', confirmations: 0, observedAt: String(c.at) } : c;
    },
    pendingSnapshot: async () => ({ uuid, coin: 'eth', confirmations: 0 }),
    markFailed: async (_u: string, reason: string) => {
      calls.push(`markFailed ${reason}`);
      return true;
    },
    recordProcessing: async () => {
      calls.push('processing step');
      markProcessing();
      return true;
    },
    // As the real one: records processing, signs (or re-sends) and makes the forward's first reading.
    forward: async () => {
      markProcessing();
      if ((script.forwardRefusals ?? 0) > 0) {
        script.forwardRefusals!--;
        calls.push('forward refused');
        if (script.forwardRefusalPermanent) throw ApplicationFailure.nonRetryable('deposit 1 does not cover gas 2', script.forwardRefusalType ?? 'InsufficientAmountError');
        throw new Error('no price to recover the network cost yet; will retry');
      }
      if (script.forwardStallFirstMs) {
        const ms = script.forwardStallFirstMs;
        script.forwardStallFirstMs = undefined;
        calls.push('forward stalled');
        await new Promise((r) => setTimeout(r, ms));
        // The bytes it stored are what the activity re-sends: the same txid.
        return { txidOut: `0xout${plans + 1}`, fate: { status: 'pending' as const, txidOut: `0xout${plans + 1}` } };
      }
      calls.push('forward');
      const txidOut = `0xout${++plans}`;
      if (script.forwardGate) await script.forwardGate();
      return { txidOut, fate: fate() };
    },
    forwardFate: async () => {
      if ((script.fateDownFor ?? 0) > 0) {
        script.fateDownFor!--;
        calls.push('fate down');
        throw ApplicationFailure.nonRetryable('node not reachable: fetch failed', 'NodeUnavailable');
      }
      return fate();
    },
    discardForward: async () => {
      calls.push('discard');
      return true;
    },
    confirmedSnapshot: async () => snapshot(),
    deliverCallbackAttempt: async (i: { stage: 'pending' | 'confirmed'; attempt: number }) => {
      const a = next(answers[i.stage]);
      calls.push(`${i.stage} #${i.attempt} ${a}`);
      return a === 'delivered' ? { outcome: 'delivered', status: 200, error: null, nextTry: null } : { outcome: 'failed', status: 500, error: 'HTTP 500', nextTry: null };
    },
  };
  return acts;
}

export interface Run {
  calls: string[];
  status: {
    state: string;
    reason: string | null;
    txidOut: string | null;
    waiting?: { reason: string; type: string; retries: number; since: string; nextTry: string } | null;
    delivery: { confirmed: { attempts: number; state: string } };
  };
  /** History length of each run, first to last (a run that continued as new ends the list's earlier entries). */
  runLengths: number[];
  /** The first run's event types, in order (e.g. EVENT_TYPE_TIMER_FIRED). */
  firstRunEvents: string[];
  /** The failure type the last run ended with, when it failed (DEPOSIT_REORGANISED); undefined when it completed. */
  failedAs?: string;
}

/** The patches (patched() IDs) a history took, in the order it took them. */
export function patchesOf(history: temporal.api.history.v1.IHistory): string[] {
  const ids: string[] = [];
  for (const e of history.events ?? []) {
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName !== 'core_patch') continue;
    const id = defaultPayloadConverter.fromPayload(m.details!['patch-data'].payloads![0]) as { id: string };
    if (!ids.includes(id.id)) ids.push(id.id);
  }
  return ids;
}

/**
 * Runs one deposit to its end, with the search attributes written as in production unless
 * `searchAttributes: false`. `drive` gets the handle while it runs (signals, updates; time does not skip
 * until it returns). Every run's history is replayed against the workflow code here. With
 * RECORD_HISTORIES=1 the first run's history is written to test/fixtures/histories/`record`.json and, when
 * the deposit continued as new, the first run that started from each carried state to
 * `….carried-<state>.json` and the last run to `….run-last.json` (when it is not one of those): a run
 * started with carried state replays from it. A file already there is kept, never written over.
 * test/foundation/replay.test.ts replays them all for good.
 */
export async function runPayment(
  env: TestWorkflowEnvironment,
  script: Script,
  opts: PaymentWorkflowOptions & { record?: string; drive?: (h: WorkflowHandle, calls: string[]) => Promise<void> } = {},
): Promise<Run> {
  const calls: string[] = [];
  const taskQueue = `payment-${Math.random().toString(36).slice(2)}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, ...(await gatewayWorkflows()), activities: scriptedActivities(script, calls) });
  const workflowId = `deposit:ethereum:${taskQueue}:0`;
  const { record, drive, ...wfOpts } = opts;
  let firstRun: string | undefined;
  let failedAs: string | undefined;
  const status = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start('paymentLifecycle', { taskQueue, workflowId, args: [input, wfOpts] });
    firstRun = handle.firstExecutionRunId;
    if (drive) await drive(handle, calls);
    const latest = env.client.workflow.getHandle(workflowId);
    try {
      return await latest.result();
    } catch (e) {
      // A deposit judged reorganised ends its run failed (the one verdict the chain can take back): its status is still queried.
      if (!(e instanceof WorkflowFailedError && e.cause instanceof ApplicationFailure && e.cause.type === DEPOSIT_REORGANISED)) throw e;
      failedAs = e.cause.type;
      return latest.query(paymentStatusQuery);
    }
  });
  // Walk the runs from the first: each one that continued as new names the next.
  const runLengths: number[] = [];
  let firstRunEvents: string[] = [];
  let runId: string | undefined = firstRun;
  const carriedStates: string[] = [];
  const write = (suffix: string, history: temporal.api.history.v1.IHistory) => {
    if (!record || process.env.RECORD_HISTORIES !== '1') return;
    // From v1.0.0 on a history on file is what payments in flight replay: it is kept, never written over ('wx');
    // one that took a patch is written beside it, named after its patches.
    const tag = patchesOf(history).map((p) => `.${p}`).join('');
    try {
      fs.writeFileSync(path.resolve(__dirname, '../fixtures/histories', `${record}${suffix}${tag}.json`), `${historyToJSON(history)}\n`, { flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  };
  while (runId) {
    const history = await env.client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    runLengths.push(events.length);
    await Worker.runReplayHistory(await gatewayWorkflows(), history, workflowId);
    runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    if (runLengths.length === 1) {
      firstRunEvents = events.map((e) => EventType[e.eventType ?? 0]);
      write('', history);
      continue;
    }
    // A run that continued another starts from the carried state (the third argument).
    const args = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
    const state = (defaultPayloadConverter.fromPayload(args[2]) as Carry).state;
    if (!carriedStates.includes(state)) {
      carriedStates.push(state);
      write(`.carried-${state}`, history);
    } else if (!runId) write('.run-last', history);
  }
  if (process.env.DEBUG) console.log(`${record ?? workflowId}: runs of ${runLengths.join(', ')} events`);
  return { calls, status: status as Run['status'], runLengths, firstRunEvents, failedAs };
}

/** Polls until `calls` satisfies `ok` (the workflow runs on real time while a test drives it). */
export async function until(calls: string[], ok: (calls: string[]) => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok(calls)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; calls: ${calls.join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
