import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { cpuSeconds } from '../lib/cpu';

/**
 * A slower machine on demand (bench/pipeline.ts --steal F): one process per core takes F of it, busy for F of
 * every 100 ms, as a neighbour on a shared host takes a share of its cores whatever runs on them. Each is pinned
 * to its core (taskset, when there is one) and, run as root, at nice -20, so that the gateway's own priorities
 * (WORKER_NICE) do not decide what it takes; otherwise at nice 0. The same burst then shows what a slower day
 * does to its ratios, on any day.
 */
export interface Stealer {
  /** How it runs, for the log: the share of each core, how many, pinned or not, at which nice. */
  readonly describe: string;
  /** CPU the stealers have used so far, in core-seconds (from /proc; 0 where there is none). */
  usedCoreS(): number;
  stop(): void;
}

/** Busy `share` of every 100 ms; it ends itself once its parent (the bench) is gone, however that went. */
const LOOP = (share: number) =>
  `const busy=${share * 100};for(;;){if(process.ppid!==${process.pid})process.exit();const t=Date.now();while(Date.now()-t<busy);Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0,${100 - share * 100});}`;

export function startStealer(share: number): Stealer {
  if (!(share > 0 && share < 1)) throw new Error(`--steal is a share of each core between 0 and 1, not ${share}`);
  const cores = os.cpus().length;
  const pinned = spawnSync('taskset', ['--version']).status === 0;
  const root = process.getuid?.() === 0;
  const children: ChildProcess[] = [];
  for (let core = 0; core < cores; core++) {
    const node = [process.execPath, '-e', LOOP(share)];
    const cmd = [...(root ? ['nice', '-n', '-20'] : []), ...(pinned ? ['taskset', '-c', String(core)] : []), ...node];
    children.push(spawn(cmd[0], cmd.slice(1), { stdio: 'ignore' }));
  }
  return {
    describe: `${share} of each of ${cores} cores${pinned ? ', pinned' : ''}, at nice ${root ? -20 : 0}`,
    usedCoreS: () => children.reduce((s, c) => s + (c.pid === undefined ? 0 : cpuSeconds(c.pid)), 0),
    stop: () => children.forEach((c) => c.kill('SIGKILL')),
  };
}
