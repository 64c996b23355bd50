import { execFile, spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * The language runtimes the client verifiers are tested with. A missing one fails the test with the
 * line that installs it (never a skip): .ci/run installs them on a fresh machine.
 */
export type Runtime = 'python' | 'php' | 'go';

const INSTALL: Record<Runtime, string> = {
  python: 'python3 with the cryptography package is missing: apt-get update && apt-get install -y python3-cryptography (or pip install cryptography)',
  php: 'php with the openssl extension is missing: apt-get update && apt-get install -y php-cli',
  go: 'go is missing: apt-get update && apt-get install -y golang-go (or put /usr/local/go/bin on PATH)',
};

const works = (cmd: string, args: string[], env: NodeJS.ProcessEnv) => spawnSync(cmd, args, { stdio: 'ignore', timeout: 60_000, env }).status === 0;

/** The first candidate that runs the probe; throws the install line when none does. */
export function requireRuntime(runtime: Runtime, env: NodeJS.ProcessEnv = process.env): string {
  const candidates: Record<Runtime, Array<[string, string[]]>> = {
    // Debian's python3-cryptography lands in /usr/bin/python3, which may not be the python3 on PATH.
    python: [['python3', ['-c', 'import cryptography']], ['/usr/bin/python3', ['-c', 'import cryptography']]],
    php: [['php', ['-r', 'exit(extension_loaded("openssl") ? 0 : 1);']]],
    go: [['go', ['version']], ['/usr/local/go/bin/go', ['version']], ['/usr/lib/go/bin/go', ['version']]],
  };
  for (const [cmd, probe] of candidates[runtime]) if (works(cmd, probe, env)) return cmd;
  throw new Error(INSTALL[runtime]);
}

/**
 * Runs a command without blocking the event loop (the verifiers fetch keys from a server in this process)
 * and returns its stdout; a non-zero exit throws with stderr.
 */
export function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const options = { cwd: opts.cwd, env: { ...process.env, ...opts.env }, timeout: opts.timeoutMs ?? 240_000, maxBuffer: 16 << 20 };
    execFile(cmd, args, options, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** A cold Go build cache compiles net/http and crypto first: minutes on a busy 2-core machine. */
export const GO_BUILD_TIMEOUT_MS = 480_000;

/**
 * Builds the Go program in `dir` into `out`: offline (the only dependency is clients/go, by a local
 * replace), with the installed toolchain, and with a build cache even where HOME is unset.
 */
export async function goBuild(go: string, dir: string, out: string): Promise<void> {
  const env: NodeJS.ProcessEnv = { GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod', GOPROXY: 'off', GOWORK: 'off' };
  if (!process.env.HOME && !process.env.GOCACHE) {
    env.GOCACHE = path.join(os.tmpdir(), 'gw-go-cache');
    env.GOPATH = path.join(os.tmpdir(), 'gw-go-path');
  }
  await run(go, ['build', '-o', out, '.'], { cwd: dir, env, timeoutMs: GO_BUILD_TIMEOUT_MS });
}

export interface Child {
  port: number;
  stop: () => Promise<void>;
}

/**
 * Starts a receiver process. With `port` given it waits until that port accepts connections; otherwise
 * the process prints its port as the first line of stdout. Bounded: 60 s to come up.
 */
export function startChild(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; port?: number } = {}): Promise<Child> {
  const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise<Child>((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop().then(() => reject(new Error(`${cmd} ${args.join(' ')}: ${why}\n${stderr}`)));
    };
    const timer = setTimeout(() => fail('did not come up within 60 s'), 60_000);
    child.once('exit', (code) => fail(`exited with ${code}`));
    const ready = (port: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ port, stop });
    };
    if (opts.port !== undefined) {
      const port = opts.port;
      const probe = () => {
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => (s.destroy(), ready(port)));
        s.once('error', () => settled || setTimeout(probe, 100));
      };
      probe();
    } else {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const line = /^(\d+)\n/.exec(out);
        if (line) ready(Number(line[1]));
      });
    }
  });
}

/** A port that was free a moment ago (for servers that cannot pick their own, like `php -S`). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
