import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../devnet/devserver';

/**
 * A throw-away PostgreSQL cluster of its own (initdb + postgres on a free loopback port), so that a test can
 * restart or stop its database without touching anyone else's. As root, PostgreSQL runs as the Debian
 * package's postgres user (it refuses root). Stopped by PID, never by name.
 */
export interface PgServer {
  url: string;
  port: number;
  dataDir: string;
  /** The postmaster's PID. */
  pid(): number | undefined;
  /** Fast shutdown (SIGINT) by PID, then a new postmaster on the same port and data directory. */
  restart(): Promise<{ downMs: number }>;
  stop(): Promise<void>;
}

export function findPgBin(name: string): string | undefined {
  const dirs = (process.env.PATH ?? '').split(path.delimiter);
  const base = '/usr/lib/postgresql';
  if (fs.existsSync(base)) for (const v of fs.readdirSync(base).sort().reverse()) dirs.push(path.join(base, v, 'bin'));
  for (const d of dirs) if (d && fs.existsSync(path.join(d, name))) return path.join(d, name);
  return undefined;
}

export async function waitForPg(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return;
    } catch (e) {
      await c.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`PostgreSQL at ${url} not ready: ${String(e)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const alive = (child: ChildProcess | undefined) => Boolean(child && child.exitCode === null && child.signalCode === null);

export async function startPgServer(opts: { maxConnections?: number } = {}): Promise<PgServer> {
  const initdb = findPgBin('initdb');
  const postgres = findPgBin('postgres');
  if (!initdb || !postgres) throw new Error('PostgreSQL binaries not found (apt-get install -y postgresql)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-pgserver-'));
  const asRoot = process.getuid?.() === 0;
  const wrap = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  const dataDir = path.join(dir, 'data');
  const [c1, a1] = wrap(initdb, ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  execFileSync(c1, a1, { stdio: 'ignore' });
  const port = await freePort('127.0.0.1');
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const log = path.join(dir, 'postgres.log');
  let child: ChildProcess | undefined;

  const launch = async () => {
    const fd = fs.openSync(log, 'a');
    if (asRoot) execFileSync('chown', ['postgres:postgres', log]);
    const [cmd, args] = wrap(postgres, [
      '-D', dataDir, '-p', String(port), '-k', dir, '-h', '127.0.0.1',
      '-c', 'fsync=off', '-c', `max_connections=${opts.maxConnections ?? 200}`,
    ]);
    child = spawn(cmd, args, { stdio: ['ignore', fd, fd] });
    fs.closeSync(fd);
    await waitForPg(url, 30_000);
  };
  /** The postmaster's own PID (runuser in between does not pass SIGINT on), from its lock file. */
  const postmasterPid = (): number | undefined => {
    try {
      return Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
    } catch {
      return undefined;
    }
  };
  const running = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  /** SIGINT to the postmaster is PostgreSQL's fast shutdown: sessions end, a checkpoint, exit. */
  const shutdown = async () => {
    const pid = postmasterPid();
    const c = child;
    const exited = alive(c) ? new Promise<void>((r) => c!.once('exit', () => r())) : Promise.resolve();
    if (pid && running(pid)) {
      process.kill(pid, 'SIGINT');
      const end = Date.now() + 20_000;
      while (running(pid) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      if (running(pid)) process.kill(pid, 'SIGKILL');
    }
    if (alive(c)) c!.kill('SIGKILL');
    await exited;
  };

  await launch();
  return {
    url,
    port,
    dataDir,
    pid: () => postmasterPid(),
    async restart() {
      const t = Date.now();
      await shutdown();
      await launch();
      return { downMs: Date.now() - t };
    },
    async stop() {
      await shutdown();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
