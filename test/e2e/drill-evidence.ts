import { Client, Connection } from '@temporalio/client';
import { Pool } from 'pg';

/**
 * Why payments are not done, from the gateway's own records (evidence for a human, never the verdict):
 * the stored result and reason, and the deposit workflow's state in Temporal with the last failure of
 * each pending activity.
 */
export interface StuckEvidence {
  uuid: string;
  ticker: string;
  result: string;
  reason: string | null;
  txidOut: string | null;
  workflow: string;
  pending: string[];
}

export async function stuckEvidence(databaseUrl: string, temporalAddress: string, taskQueueNamespace = 'default'): Promise<StuckEvidence[]> {
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  pool.on('error', () => undefined);
  const connection = await Connection.connect({ address: temporalAddress });
  const client = new Client({ connection, namespace: taskQueueNamespace });
  try {
    const { rows } = await pool.query<{ uuid: string; ticker: string; result: string; reason: string | null; txid_out: string | null; deposit_key: string }>(
      `SELECT uuid, ticker, result, reason, txid_out, deposit_key FROM payments WHERE result <> 'done' ORDER BY ticker`,
    );
    const out: StuckEvidence[] = [];
    for (const r of rows) {
      let workflow = 'unknown';
      let pending: string[] = [];
      try {
        const handle = client.workflow.getHandle(r.deposit_key);
        const d = await handle.describe();
        workflow = d.status.name;
        if (workflow === 'FAILED' || workflow === 'TERMINATED' || workflow === 'TIMED_OUT') {
          // The close event's failure: why the lifecycle ended without a stored verdict.
          const why = await handle.result().then(
            () => '',
            (e: unknown) => {
              const err = e as { message?: string; cause?: { message?: string; cause?: { message?: string } } };
              return [err.message, err.cause?.message, err.cause?.cause?.message].filter(Boolean).join(' ← ');
            },
          );
          workflow = `${workflow}: ${why.slice(0, 300)}`;
        }
        pending = (d.raw.pendingActivities ?? []).map(
          (a) => `${a.activityType?.name} attempt ${a.attempt}: ${(a.lastFailure?.message ?? '').slice(0, 240)}`,
        );
      } catch (e) {
        workflow = `not described: ${String(e).slice(0, 120)}`;
      }
      out.push({ uuid: r.uuid, ticker: r.ticker, result: r.result, reason: r.reason?.slice(0, 240) ?? null, txidOut: r.txid_out, workflow, pending });
    }
    return out;
  } finally {
    await connection.close();
    await pool.end();
  }
}
