import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Config } from '../src/config';
import { Connection } from '@temporalio/client';
import { spawnNode } from './process';

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

/** Where the ports this process picks start: above the well-known and the common service ports. */
const PICKED_PORTS_FROM = 10_000;

/** The first port of the kernel's ephemeral range (Linux; 32768 elsewhere, its default). */
function ephemeralStart(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * Ports this process binds later itself (`npm start`: the API's, the Temporal UI's, the metrics'): freePort
 * picks none of them at random for another server, which would take it first (a crash-restart run in CI lost
 * its API port to a local chain that way). A port asked for by name (preferred) is still given. Returns the
 * release of those it reserved.
 */
const reserved = new Set<number>();
export function reservePorts(...ports: Array<number | undefined>): () => void {
  const mine = ports.filter((p): p is number => Boolean(p) && !reserved.has(p!));
  for (const p of mine) reserved.add(p);
  return () => mine.forEach((p) => reserved.delete(p));
}

/**
 * A port that is free now: the preferred one if it is, else one picked at random below the kernel's
 * ephemeral range (also for a preferred 0, "any port": the kernel's own pick would come from that range). The kernel hands ports of that range to every bind to port 0 and to every outgoing
 * connection, and the servers that pick their own ports (surfnet, the Temporal server's internal ones)
 * pick them so: a port picked there could go to one of them between this check and the bind of the server
 * it is for (CI runs lost devnet starts that way). Port 0 (the kernel's pick) is the fallback. A port of
 * reservePorts is never picked at random.
 */
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
  if (preferred) {
    const p = await tryListen(preferred);
    if (p !== undefined) return p;
  }
  const below = ephemeralStart();
  for (let i = 0; below - PICKED_PORTS_FROM >= 1000 && i < 50; i++) {
    const pick = PICKED_PORTS_FROM + Math.floor(Math.random() * (below - PICKED_PORTS_FROM));
    if (reserved.has(pick)) continue;
    const p = await tryListen(pick);
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
