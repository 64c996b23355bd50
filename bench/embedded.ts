/**
 * The embedded default's API while its own worker is busy (issue 12, item 2). `npm start` runs PGlite,
 * the Temporal dev server, the local chains, the worker with its watchers and the API in one process tree;
 * the API runs in a thread of its own. For comparison, the same run also starts it with the API on the
 * main thread (EMBEDDED_API=process), as it was before.
 *
 *   npm run bench -- embedded.ts
 *   (BENCH_SECONDS per measurement, default 5; BENCH_DEPOSITS, eth deposits paid at once, default 150;
 *    BENCH_CONNECTIONS, default 32; BENCH_MODES, default thread,process)
 *
 * Per mode: GET /api/eth/info and GET /api/eth/logs, each measured idle, then in turns from the moment
 * a burst of eth deposits is paid until the last confirmed callback, while the worker detects, forwards
 * and calls back. A local receiver counts the callbacks that arrive during each turn; "busy" is the turns
 * with callbacks (mean rps, median p50, worst p99). Printed: both figures, busy/idle, the number of busy
 * turns, and the time from paying to the last confirmed callback.
 * The machine may be shared: compare the ratios of one run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Wallet } from 'ethers';
import { readDevnetState } from '../devnet';
import { freePort } from '../devnet/devserver';
import { payEvmBurst } from './pipeline/evm-burst';

const ROOT = path.resolve(__dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const DEPOSITS = Number(process.env.BENCH_DEPOSITS ?? 150);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const MODES = (process.env.BENCH_MODES ?? 'thread,process').split(',') as Array<'thread' | 'process'>;
const started = Date.now();
const log = (s: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${s}`);

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  callbacks: number;
}

/** Counts callbacks as they arrive (bench/pipeline.ts verifies signatures; this bench only counts). */
async function receiver() {
  let confirmed = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      confirmed++; // pending callbacks are off (create's default), so each arrival is a confirmed callback
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    confirmed: () => confirmed,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function startGateway(mode: 'thread' | 'process', dataDir: string, logFile: string) {
  const port = await freePort('127.0.0.1');
  const env: NodeJS.ProcessEnv = {
    ...process.env, DATA_DIR: dataDir, PORT: String(port), TEMPORAL_UI_PORT: String(await freePort('127.0.0.1')), EMBEDDED_API: mode, CALLBACK_ALLOW_PRIVATE: 'true', CREATE_RATE_LIMIT: '0',
  };
  for (const k of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'METRICS_PORT', 'LOG_LEVEL']) delete env[k];
  const out = fs.openSync(logFile, 'a');
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'src/main.ts'], { cwd: ROOT, env, stdio: ['ignore', out, out], detached: true });
  fs.closeSync(out);
  const deadline = Date.now() + 240_000;
  while (!fs.readFileSync(logFile, 'utf8').includes('gateway ready')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start (${mode}) did not get ready; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    base: `http://127.0.0.1:${port}`,
    async stop() {
      const exited = new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
      process.kill(-child.pid!, 'SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    },
  };
}

async function measure(url: string, count: () => number): Promise<Figures> {
  const before = count();
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, timeout: 10 });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx, callbacks: count() - before };
}

/** The turns during which callbacks arrived (all turns if none did): mean rps, median p50, worst p99, summed errors and callbacks. */
function busiest(turns: Figures[]): Figures & { turns: number } {
  const some = turns.filter((t) => t.callbacks > 0);
  const use = some.length > 0 ? some : turns;
  const p50s = use.map((t) => t.p50).sort((a, b) => a - b);
  return {
    rps: use.reduce((a, t) => a + t.rps, 0) / use.length,
    p50: p50s[Math.floor(p50s.length / 2)],
    p99: Math.max(...use.map((t) => t.p99)),
    errors: use.reduce((a, t) => a + t.errors, 0),
    callbacks: use.reduce((a, t) => a + t.callbacks, 0),
    turns: use.length,
  };
}

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await r.json()) as Record<string, unknown>;
  if (r.status !== 200) throw new Error(`create answered ${r.status}: ${JSON.stringify(json)}`);
  return json;
}

async function runMode(mode: 'thread' | 'process') {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `gw-embedded-${mode}-`));
  const logFile = path.join(dataDir, 'gateway.log');
  const rcv = await receiver();
  const gw = await startGateway(mode, path.join(dataDir, 'data'), logFile);
  try {
    log(`${mode}: npm start ready (log ${logFile}); load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    const payout = Wallet.createRandom().address;
    const configs: string[] = [];
    for (let i = 0; i < DEPOSITS; i++) {
      const c = await post(`${gw.base}/api/eth/create`, { callback_url: `${rcv.url}/cb/${i}`, address_out: payout, json: 1, post: 1 });
      configs.push(c.address_in as string);
    }
    const info = `${gw.base}/api/eth/info`;
    const logs = `${gw.base}/api/eth/logs?callback=${encodeURIComponent(`${rcv.url}/cb/0`)}`;
    const idle = { info: await measure(info, rcv.confirmed), logs: await measure(logs, rcv.confirmed) };
    const state = readDevnetState(path.join(dataDir, 'data', 'devnet'));
    const t0 = Date.now();
    const paid = await payEvmBurst(state, configs.map((to, i) => ({ ticker: 'eth' as const, to, amount: 50_000_000_000_000_000n + BigInt(i) })));
    const failed = paid.filter((p) => p.error).length;
    log(`${mode}: ${DEPOSITS - failed} deposits paid${failed ? ` (${failed} failed)` : ''}`);
    // Measured in turns until the last callback; the turns in which callbacks arrived (forwards and
    // deliveries under way, not only the wait for confirmations) are the busy figures.
    const turns: Record<'info' | 'logs', Figures[]> = { info: [], logs: [] };
    while (rcv.confirmed() < DEPOSITS - failed && Date.now() - t0 < 300_000) {
      turns.info.push(await measure(info, rcv.confirmed));
      turns.logs.push(await measure(logs, rcv.confirmed));
    }
    const busy = { info: busiest(turns.info), logs: busiest(turns.logs) };
    const doneS = (Date.now() - t0) / 1000;
    log(`${mode}: ${rcv.confirmed()}/${DEPOSITS - failed} confirmed callbacks, the last ${doneS.toFixed(1)} s after paying`);
    return { mode, idle, busy, doneS, confirmed: rcv.confirmed() };
  } finally {
    await gw.stop();
    await rcv.close();
  }
}

async function main() {
  log(`embedded API: ${MODES.join(' and ')}; ${DEPOSITS} eth deposits; ${CONNECTIONS} connections, ${SECONDS} s per measurement; ${os.cpus().length} cores`);
  const results = [];
  for (const mode of MODES) results.push(await runMode(mode));
  const f = (x: Figures) => `${x.rps.toFixed(0).padStart(6)} rps  p50 ${String(x.p50).padStart(4)}  p99 ${String(x.p99).padStart(5)} ms  err ${x.errors}  cb ${x.callbacks}`;
  console.log('');
  for (const r of results) {
    for (const route of ['info', 'logs'] as const) {
      const i = r.idle[route];
      const b = r.busy[route];
      console.log(`${r.mode.padEnd(8)} ${route.padEnd(5)} idle ${f(i)} | busy (${b.turns} turns) ${f(b)} | busy/idle rps ${(b.rps / i.rps).toFixed(2)}`);
    }
    console.log(`${r.mode.padEnd(8)} last confirmed callback ${r.doneS.toFixed(1)} s after paying (${r.confirmed}/${DEPOSITS})`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
