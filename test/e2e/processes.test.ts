import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { JsonRpcProvider, Network, Wallet } from 'ethers';
import { eq } from 'drizzle-orm';
import { devnetPay } from '../../devnet/drive';
import { payments } from '../../src/db/schema';
import { parseUnits } from '../../src/domain/money';
import { freePort } from '../../devnet/devserver';
import { runAdmin } from '../../scripts/admin';
import { killAndWait, waitFor } from '../helpers/process';
import { balanceOf, createConfig, logsOf, startGateway, waitForCallback, type Gateway } from './harness';

/**
 * The image's entry commands run here outside Docker: an API-only process and worker-only processes
 * against one PostgreSQL and one Temporal dev server; two workers at once; a worker killed with
 * SIGKILL mid-lifecycle and restarted; /metrics scraped from both kinds of process.
 */
const root = path.resolve(__dirname, '../..');
let gw: Gateway;
const children: ChildProcess[] = [];

function spawnEntry(entry: 'api' | 'worker', extra: Record<string, string>): ChildProcess & { out: () => string } {
  const env = {
    ...process.env,
    ...gw.env,
    ...gw.devnets.env,
    TEMPORAL_ADDRESS: gw.temporal.address,
    DEPOSIT_POLL_INTERVAL: '1 second',
    LOG_LEVEL: 'info',
    ...extra,
  };
  // One process (tsx as a loader, not its CLI wrapper), so SIGKILL hits the worker itself.
  const child = spawn(process.execPath, ['--import', 'tsx', `src/entry/${entry}.ts`], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  children.push(child);
  return Object.assign(child, { out: () => out });
}

/** The nice value of each thread of a process (/proc/PID/task/TID/stat, field 19); a thread gone meanwhile is left out. */
function threadNices(pid: number): number[] {
  return fs.readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      return [];
    }
    return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
  });
}

async function scrape(port: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (-?[0-9.eE+-]+|NaN|\+Inf|-Inf)$/.exec(line);
    if (!m) throw new Error(`not Prometheus text: ${line}`);
    samples.set(m[1], Number(m[2]));
  }
  return samples;
}

const sum = (samples: Map<string, number>, name: string) =>
  [...samples].filter(([k]) => k === name || k.startsWith(`${name}{`)).reduce((a, [, v]) => a + v, 0);

async function sentFrom(address: string): Promise<number> {
  const eth = gw.devnets.state.ethereum!;
  const p = new JsonRpcProvider(eth.rpcUrl, Network.from(BigInt(eth.chainId)), { staticNetwork: true, cacheTimeout: -1 });
  try {
    return await p.getTransactionCount(address, 'latest');
  } finally {
    p.destroy();
  }
}

beforeAll(async () => {
  gw = await startGateway({ worker: false });
}, 240_000);
afterAll(async () => {
  await killAndWait(children);
  await gw?.stop();
}, 60_000);

describe('separate API and worker processes', () => {
  let apiPort: number;
  let apiMetrics: number;
  let workerMetrics: number[];

  it('start; two workers process a deposit exactly once; /metrics parses', async () => {
    apiPort = await freePort('127.0.0.1');
    apiMetrics = await freePort('127.0.0.1');
    const api = spawnEntry('api', { PORT: String(apiPort), METRICS_PORT: String(apiMetrics) });
    workerMetrics = [await freePort('127.0.0.1'), await freePort('127.0.0.1')];
    const workers = workerMetrics.map((p) => spawnEntry('worker', { METRICS_PORT: String(p) }));
    await waitFor(() => api.out().includes('API ready'), 60_000, 'API process ready');
    for (const w of workers) await waitFor(() => w.out().includes('worker ready'), 90_000, 'worker process ready');
    // A worker process and every thread of it (workflow threads, the SDK's core) run at WORKER_NICE (10); the API
    // keeps the priority it was started with (this test's).
    for (const w of workers) expect(new Set(threadNices(w.pid!))).toEqual(new Set([Math.max(10, os.getPriority())]));
    expect(new Set(threadNices(api.pid!))).toEqual(new Set([os.getPriority()]));

    const base = `http://127.0.0.1:${apiPort}/api`;
    const health = await fetch(`${base}/health?probe=1`, { headers: { 'X-Request-Id': 'probe-req-1' } });
    expect(await health.json()).toEqual({ status: 'ok' });
    expect(health.headers.get('x-request-id')).toBe('probe-req-1');
    await waitFor(() => api.out().includes('"probe-req-1"'), 5_000, 'request log line');
    const line = JSON.parse(api.out().split('\n').find((l) => l.includes('"probe-req-1"'))!) as { req: { id: string; path: string }; res: { status: number } };
    expect(line.req).toEqual({ id: 'probe-req-1', method: 'GET', path: '/api/health' });
    expect(line.res.status).toBe(200);
    const addressOut = Wallet.createRandom().address;
    const callback = `${gw.merchantUrl}/procs?order=p1`;
    const res = await fetch(`${base}/eth/create`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callback_url: callback, address_out: addressOut, post: 1, json: 1, confirmations: 2 }),
    });
    expect(res.status).toBe(200);
    const config = (await res.json()) as { address_in: string };
    gw.orders.add(callback, 'eth', config);
    const txid = await devnetPay(gw.devnets.state, 'eth', config.address_in, '0.4');
    const confirmed = await waitForCallback(gw, (f) => f.txid_in === txid && f.result === 'sent', 120_000, 'confirmed callback');
    await waitFor(async () => (await logsOf(gw, 'eth', callback)).body.callbacks?.[0]?.result === 'done', 30_000, 'done');

    const rows = await gw.database.db.select().from(payments).where(eq(payments.txidIn, txid));
    expect(rows).toHaveLength(1);
    expect(await sentFrom(config.address_in)).toBe(1); // one forward transaction, from one of two workers
    expect(await balanceOf(gw, 'eth', addressOut)).toBe(parseUnits(String(confirmed.fields!.value_forwarded_coin), 18));

    // The API process keeps a logs body: read twice with nothing changed between, the second is a hit.
    const logsUrl = `${base}/eth/logs?callback=${encodeURIComponent(callback)}`;
    const first = await (await fetch(logsUrl)).text();
    expect(await (await fetch(logsUrl)).text()).toBe(first);
    const a = await scrape(apiMetrics);
    expect(a.get('gateway_logs_cache_reads_total{result="hit"}')).toBeGreaterThanOrEqual(1);
    expect(sum(a, 'gateway_http_requests_total')).toBeGreaterThanOrEqual(2);
    expect([...a.keys()].some((k) => k.startsWith('gateway_http_request_duration_seconds_bucket{'))).toBe(true);
    const w = await Promise.all(workerMetrics.map(scrape));
    expect(w.reduce((t, s) => t + sum(s, 'gateway_deposits_observed_total'), 0)).toBe(1);
    expect(w.reduce((t, s) => t + sum(s, 'gateway_forwards_total'), 0)).toBeGreaterThanOrEqual(1);
    expect(w.reduce((t, s) => t + sum(s, 'gateway_delivery_attempts_total'), 0)).toBeGreaterThanOrEqual(1);

    // No secret in any process's output: not the seed's words, not a key, not the callback's body.
    const mnemonic = fs.readFileSync(path.join(gw.dir, 'seed.mnemonic'), 'utf8').trim();
    for (const out of [api.out(), ...workers.map((x) => x.out())]) {
      expect(out).not.toContain(mnemonic.split(' ').slice(0, 4).join(' '));
      expect(out).not.toMatch(/PRIVATE KEY/);
      expect(out).not.toContain(String(confirmed.fields!.value_forwarded_coin));
    }
  }, 300_000);

  it('a worker killed with SIGKILL mid-lifecycle and restarted completes it with exactly one forward', async () => {
    // Only one worker from here on, so the kill certainly hits the one holding the lifecycle.
    for (const c of children.filter((c) => c.spawnargs.some((s) => s.endsWith('worker.ts')))) {
      c.kill('SIGTERM');
      await waitFor(() => c.exitCode !== null || c.signalCode !== null, 15_000, 'worker stopped');
    }
    const first = spawnEntry('worker', {});
    await waitFor(() => first.out().includes('worker ready'), 90_000, 'worker ready');
    const addressOut = Wallet.createRandom().address;
    const callback = `${gw.merchantUrl}/kill?order=k1`;
    const config = await createConfig(gw, 'eth', { callback_url: callback, address_out: addressOut, pending: 1, post: 1, json: 1, confirmations: 3 });
    const txid = await devnetPay(gw.devnets.state, 'eth', config.address_in, '0.6');
    // Killed the moment the signed forward is stored, before or during its broadcast and inclusion.
    await waitFor(async () => {
      const [row] = await gw.database.db.select().from(payments).where(eq(payments.txidIn, txid));
      return Boolean(row?.forwardRaw);
    }, 120_000, 'forward stored');
    first.kill('SIGKILL');
    await waitFor(() => first.signalCode === 'SIGKILL', 10_000, 'worker killed');

    const second = spawnEntry('worker', {});
    await waitFor(() => second.out().includes('worker ready'), 90_000, 'restarted worker ready');
    const confirmed = await waitForCallback(gw, (f) => f.txid_in === txid && f.result === 'sent', 180_000, 'confirmed after restart');
    const [row] = await gw.database.db.select().from(payments).where(eq(payments.txidIn, txid));
    expect(confirmed.fields!.txid_out).toBe(row.txidOut);
    expect(await sentFrom(config.address_in)).toBe(1);

    // The operator CLI finds the payment by its UUID through the search attribute, once its lifecycle has
    // ended: the callback goes out inside a workflow task, and a query before that task is recorded (one the
    // server refused for a hint that came during it, retried) answers from the last recorded one.
    const connection = await Connection.connect({ address: gw.temporal.address });
    try {
      await new Client({ connection }).workflow.getHandle(`deposit:ethereum:${txid}:-1`).result();
    } finally {
      await connection.close();
    }
    const lines: string[] = [];
    process.env.TEMPORAL_ADDRESS = gw.temporal.address;
    try {
      expect(await runAdmin(['show', String(confirmed.fields!.uuid)], (l) => lines.push(l))).toBe(0);
    } finally {
      delete process.env.TEMPORAL_ADDRESS;
    }
    const shown = JSON.parse(lines.join('\n')) as { workflowId: string; status: { uuid: string; txidOut: string } };
    expect(shown.workflowId).toBe(`deposit:ethereum:${txid}:-1`);
    expect(shown.status).toMatchObject({ uuid: confirmed.fields!.uuid, txidOut: row.txidOut });
  }, 400_000);
});
