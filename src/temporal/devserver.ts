import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Config } from '../config';
import { Connection } from '@temporalio/client';
import { spawnNode } from '../chains/devnet/process';

/**
 * The Temporal server asks updates.temporal.io for a newer version when its frontend starts (a DNS
 * lookup and an HTTPS request at once). The embedded default makes no outbound connection: the check is
 * off by its dynamic-config key, and by the server's environment switch as well.
 */
export const NO_VERSION_CHECK_ARGS = ['--dynamic-config-value', 'frontend.enableServerVersionCheck=false'];
export const NO_VERSION_CHECK_ENV = { TEMPORAL_VERSION_CHECK_DISABLED: '1' };

export interface DevServer {
  address: string;
  uiUrl: string;
  pid: number;
  stop(): Promise<void>;
}

/** A port that is free now: the preferred one if it is, else one the kernel picks. */
export async function freePort(host: string, preferred?: number): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number | undefined>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(undefined));
      srv.listen(port, host, () => {
        const got = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(got));
      });
    });
  if (preferred !== undefined) {
    const p = await tryListen(preferred);
    if (p !== undefined) return p;
  }
  const p = await tryListen(0);
  if (p === undefined) throw new Error(`no free port on ${host}`);
  return p;
}

/** The dev server ended before its frontend answered; `log` is the end of what it wrote. */
class DevServerExited extends Error {
  constructor(code: number | null, log: string) {
    super(`Temporal dev server exited with code ${code} before it answered; its log ends:\n${log}`);
    this.name = 'DevServerExited';
  }
}

/** The last lines of a log file, or nothing when it cannot be read. */
function logTail(file: string, lines = 15): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

async function waitForFrontend(address: string, child: ChildProcess, timeoutMs: number, logFile: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new DevServerExited(child.exitCode, logTail(logFile));
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      await conn.close();
      return;
    } catch (e) {
      lastErr = e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`Temporal dev server at ${address} did not answer within ${timeoutMs} ms: ${String(lastErr)}`);
}

/** Starts of the dev server tried before giving up, each on ports chosen afresh. */
const START_ATTEMPTS = 3;

/**
 * Starts `temporal server start-dev` (the CLI's dev server, Web UI included) as a child process, state
 * kept in dataDir so workflows survive a restart of `npm start`.
 */
export async function startDevServer(opts: {
  cliPath: string;
  host: string;
  dataDir: string;
  namespace: string;
  port?: number;
  uiPort?: number;
  searchAttributes?: Record<string, 'Keyword' | 'Text' | 'Int' | 'Datetime' | 'Bool' | 'Double' | 'KeywordList'>;
  timeoutMs?: number;
  /** Its log's level (temporal.log in dataDir); default warn (TEMPORAL_SERVER_LOG_LEVEL under npm start). */
  logLevel?: Config['temporalServerLogLevel'];
}): Promise<DevServer> {
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const logFile = path.join(opts.dataDir, 'temporal.log');
  // A dev server that exits at once most often lost a port to another process between our check and its
  // bind (it also binds ports of its own choosing): it is started again on ports chosen afresh.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(opts.host, opts.port ?? 7233);
    const uiPort = await freePort(opts.host, opts.uiPort ?? 8233);
    const args = [
      'server', 'start-dev',
      '--ip', opts.host,
      '--port', String(port),
      '--ui-port', String(uiPort),
      '--db-filename', path.join(opts.dataDir, 'temporal.sqlite'),
      '--namespace', opts.namespace,
      '--log-level', opts.logLevel ?? 'warn',
      ...NO_VERSION_CHECK_ARGS,
    ];
    for (const [name, type] of Object.entries(opts.searchAttributes ?? {})) args.push('--search-attribute', `${name}=${type}`);
    // SIGKILL after 5 s, so `npm start` is gone within its 10 s even if the dev server hangs.
    const { child, stop } = spawnNode(opts.cliPath, args, logFile, 5000, { ...process.env, ...NO_VERSION_CHECK_ENV });
    const address = `${opts.host}:${port}`;
    try {
      await waitForFrontend(address, child, opts.timeoutMs ?? 60_000, logFile);
    } catch (e) {
      await stop();
      if (e instanceof DevServerExited && attempt < START_ATTEMPTS) continue;
      throw e;
    }
    return { address, uiUrl: `http://${opts.host}:${uiPort}`, pid: child.pid!, stop };
  }
}
