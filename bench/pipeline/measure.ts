import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { Pool } from 'pg';
import type { DevnetState } from '../../devnet';
import { jsonRpc } from '../../src/chains/json-rpc';
import { BitcoinRpc } from '../../src/chains/utxo/rpc';
import { ASSETS } from '../../src/domain/assets';
import { actionsOf, addActions, type RunActions } from './actions';
import type { Observer } from './observer';
import type { Arrival } from './receiver';

const TimeoutType = temporal.api.enums.v1.TimeoutType;

/** A deposit the bench paid: where to, and how many confirmations its configuration asked for. */
export interface PaidDeposit {
  ticker: string;
  txid: string;
  vout?: number;
  addressIn: string;
  required: number;
}

/** Per deposit, every moment in ms on this machine's clock (undefined: not reached / not found). */
export interface DepositTimes {
  ticker: string;
  txid: string;
  uuid?: string;
  result?: string;
  /** When the watcher stored the payment row (payments.created_at). */
  recordedAt?: number;
  /** Its block (Solana: slot) as the chain reports it, and when the observer first saw that height. */
  height?: number;
  blockAt?: number;
  /** When it reached its required confirmations (Solana: its slot finalized), as the observer saw it. */
  finalAt?: number;
  callbackAt?: number;
  txidOut?: string;
  /** When the forward plan was stored, just before its first broadcast (forward_txs.created_at). */
  broadcastAt?: number;
  forwardHeight?: number;
  forwardAt?: number;
  /** Events summed over all runs of the deposit's workflow, and the number of runs. */
  events?: number;
  runs?: number;
  /** Temporal Cloud Actions of the deposit's workflow, summed over its runs (bench/pipeline/actions.ts). */
  actions?: RunActions;
  /** From the workflow's history (the dev server's clock, this machine's): where the time went. */
  trace?: WorkflowTrace;
}

export interface WorkflowTrace {
  /** The first run's start. */
  startedAt?: number;
  /** First `chain` signal of kind due, and of kind forward. */
  dueSignalAt?: number;
  forwardSignalAt?: number;
  /** The first forward activity: scheduled, started (a worker took it), completed. */
  forwardScheduledAt?: number;
  forwardStartedAt?: number;
  forwardCompletedAt?: number;
  /** Every event of every run: ms since the first run's start, its kind, and the activity/marker/signal it names. */
  timeline?: string[];
  /**
   * Workflow tasks that timed out, by kind: `sticky`, a task left on the sticky queue of the worker that
   * holds the run until stickyQueueScheduleToStartTimeout (that worker had no free task slot), then
   * scheduled again for any worker; `started`, a task a worker took but did not complete within the task
   * timeout (10 s), run again. Each one delays its deposit, and a task another worker takes replays the run.
   */
  taskTimeouts?: { sticky: number; started: number };
  /**
   * The longest workflow task that completed, started → completed (ms). A due deposit's task runs its forward,
   * the wait for the forward's block and its callback as local activities: set beside the `started`
   * timeouts, it tells a task that ran past the timeout on a saturated worker (tasks of the same run close to
   * it) from one the server recorded as started and never delivered (ops/temporal/config.yaml), which no
   * worker ran at all.
   */
  longestTaskMs?: number;
}

/** Limits how many lookups run at once: the nodes and the machine are shared with the gateway itself. */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

/** The block (slot) holding a transaction, read on chain; undefined if the chain does not hold it. */
export function blockLookup(state: DevnetState) {
  const ltc = state.litecoin ? new BitcoinRpc(state.litecoin.rpcUrl) : undefined;
  return async (ticker: string, txid: string): Promise<number | undefined> => {
    const network = ASSETS[ticker].network;
    if (network === 'ethereum') {
      const r = await jsonRpc<{ blockNumber: string } | null>(state.ethereum!.rpcUrl, 'eth_getTransactionReceipt', [txid]);
      return r ? Number(BigInt(r.blockNumber)) : undefined;
    }
    if (network === 'solana') {
      const r = await jsonRpc<{ value: Array<{ slot: number; err: unknown } | null> }>(state.solana!.rpcUrl, 'getSignatureStatuses', [
        [txid], { searchTransactionHistory: true },
      ]);
      const s = r.value[0];
      return s && !s.err ? s.slot : undefined;
    }
    const tx = await ltc!.call<{ blockhash?: string }>('getrawtransaction', [txid, true]);
    if (!tx.blockhash) return undefined;
    return (await ltc!.call<{ height: number }>('getblockheader', [tx.blockhash, true])).height;
  };
}

const seriesOf = (ticker: string) => ASSETS[ticker].network as 'ethereum' | 'solana' | 'litecoin';

/** Deposit identity as the callbacks show it: txid_in, plus vout on UTXO chains. */
export const depositId = (ticker: string, txid: string, vout?: number) =>
  `${ticker}:${ASSETS[ticker].network === 'ethereum' ? txid.toLowerCase() : txid}${ASSETS[ticker].network === 'litecoin' ? `:${vout}` : ''}`;

export async function measureDeposits(o: {
  state: DevnetState;
  observer: Observer;
  databaseUrl: string;
  temporalAddress: string;
  deposits: PaidDeposit[];
  confirmed: Map<string, Arrival>;
}): Promise<DepositTimes[]> {
  const block = blockLookup(o.state);
  const byId = new Map<string, Arrival>();
  for (const a of o.confirmed.values()) {
    const ticker = String(a.fields.coin ?? '');
    if (ASSETS[ticker]) byId.set(depositId(ticker, String(a.fields.txid_in), a.fields.vout === undefined ? undefined : Number(a.fields.vout)), a);
  }
  const pool = new Pool({ connectionString: o.databaseUrl, max: 2 });
  pool.on('error', () => undefined);
  const { rows: payments } = await pool.query<{ uuid: string; ticker: string; txid_in: string; vout: number | null; result: string; deposit_key: string; txid_out: string | null; created_at: Date }>(
    'SELECT uuid, ticker, txid_in, vout, result, deposit_key, txid_out, created_at FROM payments',
  );
  const { rows: forwards } = await pool.query<{ txid: string; created_at: Date }>('SELECT txid, created_at FROM forward_txs');
  await pool.end();
  const paymentById = new Map(payments.map((p) => [depositId(p.ticker, p.txid_in, p.vout ?? undefined), p]));
  const storedAt = new Map(forwards.map((f) => [f.txid, f.created_at.getTime()]));
  const history = await historySizes(o.temporalAddress);

  const out: DepositTimes[] = o.deposits.map((d) => ({ ticker: d.ticker, txid: d.txid }));
  await eachLimited(o.deposits.map((d, i) => [d, out[i]] as const), 8, async ([d, t]) => {
    const id = depositId(d.ticker, d.txid, d.vout);
    const series = seriesOf(d.ticker);
    const p = paymentById.get(id);
    t.uuid = p?.uuid;
    t.result = p?.result;
    t.recordedAt = p?.created_at.getTime();
    if (p) {
      const h = history.get(p.deposit_key);
      if (h) Object.assign(t, { events: h.events, runs: h.runs, trace: h.trace, actions: h.actions });
    }
    t.height = await block(d.ticker, d.txid).catch(() => undefined);
    if (t.height !== undefined) {
      t.blockAt = o.observer.seenAt(series, t.height);
      t.finalAt = series === 'solana' ? o.observer.seenAt('solana-finalized', t.height) : o.observer.seenAt(series, t.height + d.required - 1);
    }
    const cb = byId.get(id);
    t.callbackAt = cb?.at;
    t.txidOut = (cb?.fields.txid_out as string | undefined) ?? p?.txid_out ?? undefined;
    if (t.txidOut) {
      t.broadcastAt = storedAt.get(t.txidOut);
      t.forwardHeight = await block(d.ticker, t.txidOut).catch(() => undefined);
      if (t.forwardHeight !== undefined) t.forwardAt = o.observer.seenAt(series, t.forwardHeight);
    }
  });
  return out;
}

const minDefined = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));

/** The moments of a run's history that say where a deposit's time went (earliest over runs). */
type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

type MarkerDetails = Record<string, { payloads?: Array<{ data?: Uint8Array | null }> }>;

/** One detail of a local activity's marker (`data`: the SDK core's record of it; `result`: its answer), parsed as JSON. */
function markerDetail<T>(details: MarkerDetails | null | undefined, key: 'data' | 'result'): T | undefined {
  const data = details?.[key]?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    return JSON.parse(Buffer.from(data).toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The activity type a local activity's marker names. */
function markerActivity(details: MarkerDetails | undefined): string | undefined {
  return markerDetail<{ activity_type?: string }>(details, 'data')?.activity_type;
}

/** "WorkflowTaskScheduled", "ActivityTaskCompleted forward", "MarkerRecorded confirmations", … */
function describeEvent(e: HistoryEvent, names: Map<string, string>): string {
  const key = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]) ?? 'unknown';
  const kind = key.replace(/EventAttributes$/, '').replace(/^./, (c) => c.toUpperCase());
  const a = (e as Record<string, Record<string, unknown> | undefined>)[key] ?? {};
  const name =
    (a.activityType as { name?: string } | undefined)?.name ??
    (a.signalName as string | undefined) ??
    (a.scheduledEventId !== undefined ? names.get(String(a.scheduledEventId)) : undefined) ??
    markerActivity(a.details as MarkerDetails | undefined);
  if (name && a.activityType) names.set(String(e.eventId), name);
  return name ? `${kind} ${name}` : kind;
}

function traceOf(events: HistoryEvent[], t: WorkflowTrace): void {
  const forwardIds = new Set<string>();
  const names = new Map<string, string>();
  const origin = t.startedAt ?? optionalTsToMs(events[0]?.eventTime);
  t.timeline ??= [];
  let taskStartedAt: number | undefined;
  for (const e of events) {
    const at = optionalTsToMs(e.eventTime);
    const described = describeEvent(e, names);
    // Which worker took a workflow task, and on which queue it was scheduled (sticky or normal); why one timed out.
    const scheduledOn = e.workflowTaskScheduledEventAttributes?.taskQueue?.kind;
    const takenBy = e.workflowTaskStartedEventAttributes?.identity;
    const timeout = e.workflowTaskTimedOutEventAttributes?.timeoutType;
    const detail = scheduledOn ? ` queue=${scheduledOn}` : takenBy ? ` by=${takenBy}` : timeout ? ` type=${timeout}` : '';
    t.timeline.push(`+${at !== undefined && origin !== undefined ? at - origin : '?'} ${described}${detail}`);
    if (timeout) {
      t.taskTimeouts ??= { sticky: 0, started: 0 };
      if (timeout === TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START) t.taskTimeouts.sticky++;
      else if (timeout === TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE) t.taskTimeouts.started++;
    }
    if (e.workflowTaskStartedEventAttributes) taskStartedAt = at;
    if (e.workflowTaskCompletedEventAttributes && at !== undefined && taskStartedAt !== undefined) {
      t.longestTaskMs = Math.max(t.longestTaskMs ?? 0, at - taskStartedAt);
    }
    if (e.workflowExecutionStartedEventAttributes) t.startedAt = minDefined(t.startedAt, at);
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName === 'chain') {
      const data = signal.input?.payloads?.[0]?.data;
      const kind = data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { kind?: string }).kind : undefined;
      if (kind === 'due') t.dueSignalAt = minDefined(t.dueSignalAt, at);
      if (kind === 'forward') t.forwardSignalAt = minDefined(t.forwardSignalAt, at);
    }
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'forward') {
      forwardIds.add(String(e.eventId));
      t.forwardScheduledAt = minDefined(t.forwardScheduledAt, at);
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started && forwardIds.has(String(started.scheduledEventId))) t.forwardStartedAt = minDefined(t.forwardStartedAt, at);
    const completed = e.activityTaskCompletedEventAttributes;
    if (completed && forwardIds.has(String(completed.scheduledEventId))) t.forwardCompletedAt = minDefined(t.forwardCompletedAt, at);
  }
}

/** Every payment workflow execution's history (paymentLifecycle): its length, summed per workflow ID over its runs (continue-as-new), and its trace. */
async function historySizes(address: string): Promise<Map<string, { events: number; runs: number; trace: WorkflowTrace; actions?: RunActions }>> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });
  const out = new Map<string, { events: number; runs: number; trace: WorkflowTrace; actions?: RunActions }>();
  try {
    const runs: Array<{ workflowId: string; runId: string }> = [];
    for await (const w of client.workflow.list({ query: `WorkflowType = 'paymentLifecycle'` })) runs.push({ workflowId: w.workflowId, runId: w.runId });
    await eachLimited(runs, 8, async ({ workflowId, runId }) => {
      const h = await client.workflow.getHandle(workflowId, runId).fetchHistory();
      const s = out.get(workflowId) ?? { events: 0, runs: 0, trace: {} };
      s.events += h.events?.length ?? 0;
      s.runs++;
      s.actions = addActions(s.actions, actionsOf(h.events ?? []));
      traceOf(h.events ?? [], s.trace);
      out.set(workflowId, s);
    });
  } finally {
    await connection.close();
  }
  return out;
}
