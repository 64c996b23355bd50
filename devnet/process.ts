import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

export interface NodeProcess {
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

const SETPRIV = '/usr/bin/setpriv';

/**
 * The command that runs `cmd` with SIGKILL as its parent-death signal (Linux, util-linux setpriv, which
 * execs it: same PID): if this process dies without stopping its children (SIGKILL, OOM killer), they go
 * with it instead of lingering and holding their data directories, ports and locks against the restart.
 */
export function dieWithParent(cmd: string, args: string[]): [string, string[]] {
  if (process.platform === 'linux' && fs.existsSync(SETPRIV)) return [SETPRIV, ['--pdeathsig', 'KILL', '--', cmd, ...args]];
  return [cmd, args];
}

/**
 * Starts a server as a child process with its output in `logFile`; stop() sends SIGTERM to exactly that
 * PID and SIGKILL after `killAfterMs`. The child dies with this process (dieWithParent).
 */
export function spawnNode(cmd: string, args: string[], logFile: string, killAfterMs = 10_000, env?: NodeJS.ProcessEnv): NodeProcess {
  const fd = fs.openSync(logFile, 'a');
  const [file, argv] = dieWithParent(cmd, args);
  const child = spawn(file, argv, { stdio: ['ignore', fd, fd], ...(env ? { env } : {}) });
  fs.closeSync(fd);
  if (child.pid === undefined) throw new Error(`${cmd} did not start`);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    child.once('exit', () => resolve());
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    await exited;
    clearTimeout(timer);
  };
  return { pid: child.pid, child, stop };
}

/** Starts of a server that lost a port it was handed to another process before it could bind it. */
export const PORT_ATTEMPTS = 3;

/**
 * Runs `start` again, on ports chosen afresh, when it failed because a port it was given (or chose) was
 * taken between the check and the bind (`lost` tells those failures apart), up to PORT_ATTEMPTS starts.
 */
export async function startOnFreshPorts<T>(start: () => Promise<T>, lost: (e: Error) => boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (e) {
      if (attempt >= PORT_ATTEMPTS || !(e instanceof Error) || !lost(e)) throw e;
    }
  }
}

/**
 * Polls `probe` until it resolves, the child exits, or the bound passes. A probe that hangs (another
 * process holds the port and never answers) does not hide the child's exit.
 */
export async function waitUntilReady(what: string, proc: NodeProcess, probe: () => Promise<unknown>, timeoutMs: number, logFile?: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const exited = new Promise<'exited'>((resolve) => {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) resolve('exited');
    else proc.child.once('exit', () => resolve('exited'));
  });
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if ((await Promise.race([probe().then(() => 'ready' as const), exited])) === 'ready') return;
      const tail = logFile && fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-2000) : '';
      throw new ChildExited(`${what} exited with code ${proc.child.exitCode}\n${tail}`);
    } catch (e) {
      if (e instanceof ChildExited) throw e;
      last = e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms: ${String(last)}`);
}

class ChildExited extends Error {}
