import fs from 'node:fs';
import path from 'node:path';
import { alignedTable, stats, type Stats } from './report';

/**
 * --steps: the workers run at LOG_LEVEL=debug and log each step's timing (src/temporal/step-timings.ts);
 * here those lines are read back from the workers' process logs and tabulated per asset and step, for the
 * measured deposits only. A step a workflow takes more than once is numbered (`confirmations#2`). Per step,
 * p50/p95 in seconds of: the wait between being scheduled and starting; its run; and the time from the
 * previous step's end to its schedule (the turn through the worker between two steps of one task, or a wait
 * for the chain or a hint between two tasks).
 */
export interface StepLine {
  step: string;
  workflowId: string;
  local: boolean;
  scheduledAt: number;
  waitMs: number;
  runMs: number;
}

export interface StepStats {
  wait: Stats | null;
  run: Stats | null;
  sincePrevious: Stats | null;
}

export function readStepLines(logDir: string): StepLine[] {
  const out: StepLine[] = [];
  for (const f of fs.readdirSync(logDir).filter((n) => n.startsWith('worker'))) {
    for (const line of fs.readFileSync(path.join(logDir, f), 'utf8').split('\n')) {
      if (!line.startsWith('{') || !line.includes('"step timing"')) continue;
      try {
        const l = JSON.parse(line) as Partial<StepLine> & { msg?: string };
        if (l.msg === 'step timing' && l.step && l.workflowId && typeof l.scheduledAt === 'number') out.push(l as StepLine);
      } catch {
        // A line cut by a killed process.
      }
    }
  }
  return out;
}

/** The steps of the deposits whose workflow ID (deposit:{network}:{txid}:{index}) names a txid of `tickerOfTxid`, by its ticker. */
export function stepTable(tickers: string[], tickerOfTxid: Map<string, string>, lines: StepLine[]): { table: string; data: Record<string, Record<string, StepStats>> } {
  const byWorkflow = new Map<string, StepLine[]>();
  for (const l of lines) {
    const txid = l.workflowId.split(':')[2];
    if (!txid || !tickerOfTxid.has(txid)) continue;
    const mine = byWorkflow.get(l.workflowId) ?? [];
    mine.push(l);
    byWorkflow.set(l.workflowId, mine);
  }
  const samples = new Map<string, { wait: number[]; run: number[]; since: number[] }>();
  const order: string[] = [];
  for (const [workflowId, steps] of byWorkflow) {
    const ticker = tickerOfTxid.get(workflowId.split(':')[2])!;
    steps.sort((a, b) => a.scheduledAt - b.scheduledAt);
    const seen = new Map<string, number>();
    steps.forEach((s, i) => {
      const k = (seen.get(s.step) ?? 0) + 1;
      seen.set(s.step, k);
      const name = k === 1 ? s.step : `${s.step}#${k}`;
      const key = `${ticker}\t${name}`;
      if (!samples.has(key)) samples.set(key, { wait: [], run: [], since: [] });
      if (!order.includes(name)) order.push(name);
      const x = samples.get(key)!;
      x.wait.push(s.waitMs / 1000);
      x.run.push(s.runMs / 1000);
      const prev = steps[i - 1];
      if (prev) x.since.push((s.scheduledAt - (prev.scheduledAt + prev.waitMs + prev.runMs)) / 1000);
    });
  }
  const data: Record<string, Record<string, StepStats>> = {};
  for (const t of tickers) {
    data[t] = {};
    for (const name of order) {
      const x = samples.get(`${t}\t${name}`);
      if (x) data[t][name] = { wait: stats(x.wait), run: stats(x.run), sincePrevious: stats(x.since) };
    }
  }
  const f = (s: Stats | null) => (s ? `${s.p50.toFixed(2)}/${s.p95.toFixed(2)}` : '-');
  const head = ['step (s, p50/p95: wait / run / since the previous step ended)', ...tickers];
  const rows = order.map((name) => [name, ...tickers.map((t) => (data[t][name] ? `${f(data[t][name].wait)} ${f(data[t][name].run)} ${f(data[t][name].sincePrevious)}` : '-'))]);
  return { table: alignedTable(head, rows), data };
}
