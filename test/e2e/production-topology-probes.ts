import { Client, Connection } from '@temporalio/client';
import { Pool } from 'pg';
import type { Supervised } from './drill-procs';

/**
 * What the production-topology run asks Temporal directly: which worker runs a forward's lifecycle (to
 * SIGKILL that one), and whether the custom search attributes find the payments on SQL visibility.
 */

/**
 * SIGKILLs the worker running a lifecycle whose forward is stored but not yet included: the one named by
 * the workflow's pending activity (a worker's identity is `pid@host`), watched for up to `withinMs`; when
 * no activity is in flight by then, every worker, so that the one holding the lifecycle is certainly among
 * them. Says whom it killed and why.
 */
export async function killForwardingWorker(databaseUrl: string, address: string, namespace: string, workers: Supervised[], withinMs = 15_000): Promise<string> {
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  try {
    const end = Date.now() + withinMs;
    let last: { deposit_key: string; ticker: string } | undefined;
    while (Date.now() < end) {
      const { rows } = await pool.query<{ deposit_key: string; ticker: string }>(
        `SELECT deposit_key, ticker FROM payments WHERE forward_raw IS NOT NULL AND snapshot IS NULL`,
      );
      for (const row of rows) {
        last = row;
        const d = await client.workflow.getHandle(row.deposit_key).describe();
        for (const a of d.raw.pendingActivities ?? []) {
          const pid = Number(/^(\d+)@/.exec(a.lastWorkerIdentity ?? '')?.[1]);
          const w = workers.find((x) => x.child()?.pid === pid && x.alive());
          if (w) {
            w.kill();
            return `${w.name} (pid ${pid}), running ${a.activityType?.name} of the ${row.ticker} forward ${row.deposit_key}`;
          }
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const alive = workers.filter((w) => w.alive());
    for (const w of alive) w.kill();
    return `${alive.map((w) => w.name).join(' and ')} (no activity in flight named its worker within ${withinMs} ms), ${last ? `the ${last.ticker} forward ${last.deposit_key} stored, not included` : 'no forward stored'}`;
  } finally {
    await connection.close();
    await pool.end();
  }
}

export interface SearchAttributeCounts {
  /** Payment workflows per GatewayTicker value. */
  byTicker: Record<string, number>;
  /** Payment workflows with GatewayStage = "done". */
  done: number;
  /** Each payment UUID of a sample found by GatewayPaymentUuid: its workflow ID, or null. */
  byUuid: Record<string, string | null>;
  /** The task queues the payment workflows of each ticker ran on. */
  queuesByTicker: Record<string, string[]>;
}

export async function searchAttributeCounts(address: string, namespace: string, tickers: readonly string[], uuids: string[] = []): Promise<SearchAttributeCounts> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  try {
    // The latest run of each payment's workflow only: a run that continued as new keeps its old attributes.
    const count = async (query: string) => (await client.workflow.count(`${query} AND ExecutionStatus != "ContinuedAsNew"`)).count;
    const byTicker: Record<string, number> = {};
    const queuesByTicker: Record<string, string[]> = {};
    for (const t of tickers) {
      byTicker[t] = await count(`GatewayTicker = "${t}"`);
      const queues = new Set<string>();
      for await (const w of client.workflow.list({ query: `GatewayTicker = "${t}"` })) queues.add(w.taskQueue);
      queuesByTicker[t] = [...queues].sort();
    }
    const byUuid: Record<string, string | null> = {};
    for (const u of uuids) {
      let id: string | null = null;
      for await (const w of client.workflow.list({ query: `GatewayPaymentUuid = "${u}"` })) id = w.workflowId;
      byUuid[u] = id;
    }
    return { byTicker, done: await count('GatewayStage = "done"'), byUuid, queuesByTicker };
  } finally {
    await connection.close();
  }
}
