import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The drill's process supervisor: the production entry points (src/entry/api.ts, src/entry/worker.ts) as
 * child processes, each one process (tsx as a loader) so that SIGKILL hits the gateway itself. An exit the
 * drill did not cause is recorded (a process that died on its own) and the process is started again, as
 * an orchestrator's restart policy would, so the run goes on and the death is a count, not a crash.
 */
const ROOT = path.resolve(__dirname, '../..');

export interface Exit {
  role: string;
  name: string;
  at: number;
  code: number | null;
  signal: string | null;
  /** The error lines it printed last (e.g. an unhandled 'error' event): the evidence of why. */
  why: string;
  /** The last lines it printed. */
  tail: string;
}

/** The lines of a dying Node process's output that say what killed it. */
export function whyItDied(out: string): string {
  const lines = out.split('\n').filter((l) => /^(\w*Error\b|error:|Emitted 'error' event|\s+at Object\.|FATAL)/.test(l) || /"level":(50|60)/.test(l));
  return lines.slice(-4).join('\n').slice(0, 800);
}

export interface Supervised {
  name: string;
  role: 'api' | 'worker';
  child(): ChildProcess | undefined;
  alive(): boolean;
  ready(): boolean;
  /** SIGKILL by PID (a planned kill: not counted as a death). */
  kill(): void;
  start(): void;
  /** For the end of the run: stops it for good. */
  stop(): Promise<void>;
}

export interface Supervisor {
  spawn(role: 'api' | 'worker', name: string, env: Record<string, string>): Supervised;
  /** Exits nobody asked for. */
  deaths: Exit[];
  kills: number;
  logDir: string;
  stopAll(): Promise<void>;
}

export function createSupervisor(logDir: string, baseEnv: Record<string, string>, restartDelayMs = 1000): Supervisor {
  fs.mkdirSync(logDir, { recursive: true });
  const deaths: Exit[] = [];
  const all: Supervised[] = [];
  let shuttingDown = false;
  const sup: Supervisor = {
    deaths,
    kills: 0,
    logDir,
    spawn(role, name, env) {
      let child: ChildProcess | undefined;
      let out = '';
      let readyFlag = false;
      /** Per child: whether its exit was asked for (a kill by the drill). */
      let current = { planned: false };
      let stopped = false;
      const log = fs.createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
      const start = () => {
        if (stopped || s.alive()) return;
        const me = { planned: false };
        current = me;
        readyFlag = false;
        out = '';
        // BENCH_PROFILE=<dir> (bench/pipeline.ts): each process writes CPU profiles (one per thread) into <dir>/<name>.
        const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.join(path.resolve(process.env.BENCH_PROFILE), name)}`] : [];
        // BENCH_NODE_ARGS: more node flags for each process, space-separated (--trace-gc, --perf-basic-prof, ...).
        const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
        const c = spawn(process.execPath, [...profile, ...nodeArgs, '--import', 'tsx', `src/entry/${role}.ts`], {
          cwd: ROOT,
          env: { ...process.env, ...baseEnv, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child = c;
        const onData = (d: Buffer) => {
          const s = d.toString('utf8');
          log.write(s);
          out = (out + s).slice(-20_000);
          if (!readyFlag && (out.includes('API ready') || out.includes('worker ready'))) readyFlag = true;
        };
        c.stdout!.on('data', onData);
        c.stderr!.on('data', onData);
        c.once('exit', (code, signal) => {
          log.write(`\n[drill] ${name} exited code=${code} signal=${signal} planned=${me.planned}\n`);
          if (me.planned || stopped || shuttingDown) return;
          deaths.push({ role, name, at: Date.now(), code, signal, why: whyItDied(out), tail: out.split('\n').slice(-15).join('\n') });
          setTimeout(start, restartDelayMs).unref();
        });
      };
      const s: Supervised = {
        name,
        role,
        child: () => child,
        alive: () => Boolean(child && child.exitCode === null && child.signalCode === null),
        ready: () => s.alive() && readyFlag,
        kill() {
          if (!s.alive()) return;
          current.planned = true;
          sup.kills++;
          child!.kill('SIGKILL');
        },
        start,
        async stop() {
          stopped = true;
          const c = child;
          if (c && c.exitCode === null && c.signalCode === null) {
            const exited = new Promise<void>((r) => c.once('exit', () => r()));
            c.kill('SIGTERM');
            const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
            await exited;
            clearTimeout(t);
          }
          log.end();
        },
      };
      all.push(s);
      start();
      return s;
    },
    async stopAll() {
      shuttingDown = true;
      await Promise.all(all.map((s) => s.stop()));
    },
  };
  return sup;
}

/** What the drills give every gateway process besides the chains, the database and Temporal. */
export const DRILL_PROCESS_ENV = { CALLBACK_ALLOW_PRIVATE: 'true', CREATE_RATE_LIMIT: '0', WATCH_INTERVAL_MS: '300', DEPOSIT_POLL_INTERVAL: '1 second', LOG_LEVEL: 'info' };

/**
 * The production topology under a supervisor: the API on `apiPort` and two workers (and any `more`, by name
 * with their own environment), and a wait that polls `pred` until it holds or `ms` pass (`label` names the
 * drill in the time-out).
 */
export function spawnGateway(sup: Supervisor, apiPort: number, label: string, more: Record<string, Record<string, string>> = {}) {
  const api = sup.spawn('api', 'api', { PORT: String(apiPort) });
  const workers = [sup.spawn('worker', 'worker-1', {}), sup.spawn('worker', 'worker-2', {})];
  for (const [name, env] of Object.entries(more)) workers.push(sup.spawn('worker', name, env));
  const until = async (pred: () => boolean | Promise<boolean>, ms: number, what: string) => {
    const end = Date.now() + ms;
    while (!(await pred())) {
      if (Date.now() > end) throw new Error(`${label}: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  return { api, workers, until };
}
