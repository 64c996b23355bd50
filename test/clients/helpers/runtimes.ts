import { execFile } from 'node:child_process';
import { spawnSync } from 'node:child_process';

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

const works = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 60_000 });
  return r.status === 0;
};

/** The first candidate that runs the probe; throws the install line when none does. */
export function requireRuntime(runtime: Runtime): string {
  const candidates: Record<Runtime, Array<[string, string[]]>> = {
    // Debian's python3-cryptography lands in /usr/bin/python3, which may not be the python3 on PATH.
    python: [['python3', ['-c', 'import cryptography']], ['/usr/bin/python3', ['-c', 'import cryptography']]],
    php: [['php', ['-r', 'exit(extension_loaded("openssl") ? 0 : 1);']]],
    go: [['go', ['version']], ['/usr/local/go/bin/go', ['version']], ['/usr/lib/go/bin/go', ['version']]],
  };
  for (const [cmd, probe] of candidates[runtime]) if (works(cmd, probe)) return cmd;
  throw new Error(INSTALL[runtime]);
}

/**
 * Runs a command without blocking the event loop (the verifiers fetch keys from a server in this process)
 * and returns its stdout; a non-zero exit throws with stderr.
 */
export function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, timeout: 240_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}
