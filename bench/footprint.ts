/**
 * The embedded default's start time and memory (issue 59, items 1 and 4). `npm start` as a newcomer runs
 * it, in a throw-away data directory: a first start (which makes the data directory, the database, the
 * local chains' wallets), stopped once healthy, then a second start, timed from the spawn of `npm start`
 * until GET /api/health answers 200. BENCH_SETTLE_S (default 60) seconds after that, the resident memory
 * of each process of the tree is read from /proc: RSS (what `ps` shows; pages shared between processes
 * counted in each) and PSS (shared pages split between their users; the sum is the tree's real share).
 *
 *   npm run bench -- footprint.ts
 *   (BENCH_SETTLE_S, default 60; BENCH_STARTS, starts timed after the first, default 1)
 *
 * The machine may be shared: the load average is printed with each figure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../devnet/devserver';

const ROOT = path.resolve(__dirname, '..');
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 60);
const STARTS = Number(process.env.BENCH_STARTS ?? 1);
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

interface Proc {
  pid: number;
  ppid: number;
  part: string;
  rssKb: number;
  pssKb: number;
  threads: number;
}

function readProc(pid: number): { ppid: number; cmd: string[]; rssKb: number; pssKb: number; threads: number } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
    let pssKb = 0;
    try {
      pssKb = field(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss');
    } catch {
      // no smaps_rollup on this kernel: PSS left 0
    }
    return { ppid, cmd, rssKb: field(status, 'VmRSS'), pssKb, threads: field(status, 'Threads') };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** A name for what a process of the tree is, from its command line. */
function partOf(cmd: string[]): string {
  const line = cmd.join(' ');
  const base = (s: string) => path.basename(s ?? '');
  if (/npm-cli\.js|\/npm$/.test(cmd[1] ?? '') || /^npm( |$)/.test(base(cmd[0]))) return 'npm (`npm start` itself)';
  if (base(cmd[0]) === 'sh' || base(cmd[0]) === 'bash') return 'sh (npm script shell)';
  if (/temporal/.test(base(cmd[0])) && cmd.includes('server')) return 'Temporal dev server';
  if (/anvil/.test(line)) return 'anvil (ethereum)';
  if (/surfnet-child|surfpool/.test(line)) return 'surfnet (solana)';
  for (const n of ['litecoind', 'bitcoind', 'bchd', 'btcd']) if (cmd.some((a) => base(a) === n)) return n;
  if (base(cmd[0]) === 'node' || cmd[0] === process.execPath) {
    if (cmd.some((a) => /tsx\/dist\/cli|\.bin\/tsx/.test(a)) && !cmd.some((a) => a.includes('loader'))) return 'node: tsx launcher';
    if (cmd.some((a) => /scripts\/setup-temporal/.test(a))) return 'node: prestart';
    return 'node: gateway';
  }
  return base(cmd[0]);
}

/** The process tree under pid (pid itself first). */
function tree(pid: number): Proc[] {
  const all = new Map<number, ReturnType<typeof readProc> & object>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const p = readProc(Number(entry));
    if (p) all.set(Number(entry), p);
  }
  const out: Proc[] = [];
  const walk = (p: number) => {
    const info = all.get(p);
    if (!info) return;
    out.push({ pid: p, ppid: info.ppid, part: partOf(info.cmd), rssKb: info.rssKb, pssKb: info.pssKb, threads: info.threads });
    for (const [c, i] of all) if (i.ppid === p) walk(c);
  };
  walk(pid);
  return out;
}

async function healthy(port: number): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(2_000) });
    return r.status === 200;
  } catch {
    return false;
  }
}

async function start(dataDir: string, logFile: string) {
  const port = await freePort('127.0.0.1');
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), TEMPORAL_UI_PORT: String(await freePort('127.0.0.1')) };
  for (const k of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'METRICS_PORT', 'LOG_LEVEL', 'NODE_OPTIONS']) delete env[k];
  for (const k of Object.keys(env)) if (k.startsWith('npm_')) delete env[k]; // as from a shell, not from inside `npm run bench`
  const out = fs.openSync(logFile, 'a');
  const t0 = performance.now();
  const child: ChildProcess = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', out, out], detached: true });
  fs.closeSync(out);
  const deadline = Date.now() + 300_000;
  while (!(await healthy(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not answer health; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const readyS = (performance.now() - t0) / 1000;
  return {
    child,
    readyS,
    async stop() {
      const exited = new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
      process.kill(-child.pid!, 'SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      // npm exits as soon as its script does; what the script left (if anything) goes with the group.
      await new Promise((r) => setTimeout(r, 1_000));
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    },
  };
}

const mb = (kb: number) => (kb / 1024).toFixed(0).padStart(6);

function report(procs: Proc[]) {
  const parts = new Map<string, { n: number; rss: number; pss: number; threads: number }>();
  for (const p of procs) {
    const e = parts.get(p.part) ?? { n: 0, rss: 0, pss: 0, threads: 0 };
    e.n++;
    e.rss += p.rssKb;
    e.pss += p.pssKb;
    e.threads += p.threads;
    parts.set(p.part, e);
  }
  console.log(`  ${'part'.padEnd(32)} ${'RSS MB'.padStart(6)} ${'PSS MB'.padStart(6)} threads`);
  for (const [part, e] of [...parts].sort((a, b) => b[1].rss - a[1].rss)) {
    console.log(`  ${(e.n > 1 ? `${part} ×${e.n}` : part).padEnd(32)} ${mb(e.rss)} ${mb(e.pss)} ${String(e.threads).padStart(7)}`);
  }
  const rss = procs.reduce((a, p) => a + p.rssKb, 0);
  const pss = procs.reduce((a, p) => a + p.pssKb, 0);
  console.log(`  ${'whole tree'.padEnd(32)} ${mb(rss)} ${mb(pss)}`);
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-footprint-'));
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'gateway.log');
  console.log(`data dir ${dataDir}, log ${logFile}; ${os.cpus().length} cores, load average ${load()}`);
  try {
    const first = await start(dataDir, logFile);
    console.log(`first start (new data dir): health after ${first.readyS.toFixed(1)} s (load ${load()})`);
    await first.stop();
    for (let i = 1; i <= STARTS; i++) {
      const gw = await start(dataDir, logFile);
      try {
        console.log(`start ${i + 1} (same data dir): health after ${gw.readyS.toFixed(1)} s (load ${load()})`);
        if (i < STARTS) continue;
        await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
        const procs = tree(gw.child.pid!);
        console.log(`memory ${SETTLE_S} s after ready (load ${load()}):`);
        report(procs);
      } finally {
        await gw.stop();
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  } catch (e) {
    console.error(e instanceof Error ? e.message : e);
    console.error(fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-3000) : '');
    process.exitCode = 1;
  }
}

void main();
