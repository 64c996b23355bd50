import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { dieWithParent } from '../../devnet/process';
import { resolveTemporalCli } from '../../src/temporal/binaries';
import { freePort } from '../../devnet/devserver';
import { isAlive } from './process';

/**
 * The production Temporal shape, as docker-compose.yml runs it: the Temporal server of ops/temporal/VERSION
 * (built by scripts/setup-temporal-server.js) on PostgreSQL with SQL visibility, started with
 * ops/temporal/config.yaml and dynamicconfig.yaml, its schema made by ops/temporal/setup-schema.sh and its
 * namespace and search attributes by ops/temporal/setup-namespace.sh: the same files the compose services
 * run. Every port is a free loopback port; the process is stopped and killed by its PID.
 */
const ROOT = path.resolve(__dirname, '../..');
export const OPS_DIR = path.join(ROOT, 'ops/temporal');
export const TEMPORAL_SERVER_VERSION = fs.readFileSync(path.join(OPS_DIR, 'VERSION'), 'utf8').trim();
const BIN = path.join(ROOT, '.tools/temporal-server/bin');
const run = promisify(execFile);

/** The template's port variables: every one gets a free loopback port, kept across restarts. */
const PORT_VARIABLES = [
  'FRONTEND_GRPC_PORT', 'FRONTEND_HTTP_PORT', 'FRONTEND_MEMBERSHIP_PORT', 'MATCHING_GRPC_PORT', 'MATCHING_MEMBERSHIP_PORT',
  'HISTORY_GRPC_PORT', 'HISTORY_MEMBERSHIP_PORT', 'WORKER_GRPC_PORT', 'WORKER_MEMBERSHIP_PORT',
] as const;

export interface TemporalServer {
  address: string;
  namespace: string;
  version: string;
  /** The environment the server process runs with (config.yaml's variables). */
  env: Record<string, string>;
  logFile: string;
  pid(): number | undefined;
  /** Whether the server process is running (it never restarts by itself). */
  alive(): boolean;
  /** Stops the server (SIGKILL: a crash, or SIGTERM: a graceful stop) and starts it again on the same ports. */
  restart(signal?: 'SIGKILL' | 'SIGTERM'): Promise<{ downMs: number }>;
  stop(): Promise<void>;
}

/**
 * The server and SQL tool. npm test's pretest starts their build in the background on a machine that has
 * none (scripts/setup-temporal-server.js --background); this waits for that build and installs its result
 * (the test files that need the server run last: test/helpers/sequencer.js).
 */
export async function temporalServerBinaries(): Promise<{ server: string; sqlTool: string }> {
  const server = process.env.TEMPORAL_SERVER_PATH || path.join(BIN, 'temporal-server');
  const sqlTool = process.env.TEMPORAL_SQL_TOOL_PATH || path.join(BIN, 'temporal-sql-tool');
  if (![server, sqlTool].every((p) => fs.existsSync(p))) {
    const setup = path.join(ROOT, 'scripts/setup-temporal-server.js');
    await run(process.execPath, [setup], { timeout: 70 * 60_000 }).catch((e: { stderr?: string; message: string }) => {
      throw new Error(`the Temporal server is missing and ${setup} failed: ${(e.stderr ?? e.message).trim().split('\n').pop()}`);
    });
  }
  for (const p of [server, sqlTool]) {
    if (!fs.existsSync(p)) throw new Error(`${p} is missing: node scripts/setup-temporal-server.js builds it (npm test's pretest does)`);
  }
  return { server, sqlTool };
}

/**
 * The server's environment: config.yaml's variables for a PostgreSQL at `pgUrl`, with the settings of
 * docker-compose.yml's temporal service (test/ops/compose.test.ts compares them) and loopback placement.
 */
export function temporalServerEnv(o: { pgUrl: string; ports?: Record<string, string>; databases?: TemporalDatabases; dynamicConfigFile?: string }): Record<string, string> {
  const pg = new URL(o.pgUrl);
  return {
    POSTGRES_SEEDS: pg.hostname,
    DB_PORT: pg.port || '5432',
    POSTGRES_USER: decodeURIComponent(pg.username),
    POSTGRES_PWD: decodeURIComponent(pg.password),
    DBNAME: o.databases?.history ?? 'temporal',
    VISIBILITY_DBNAME: o.databases?.visibility ?? 'temporal_visibility',
    NUM_HISTORY_SHARDS: '512',
    BIND_ON_IP: '127.0.0.1',
    TEMPORAL_BROADCAST_ADDRESS: '127.0.0.1',
    DYNAMIC_CONFIG_FILE_PATH: o.dynamicConfigFile ?? path.join(OPS_DIR, 'dynamicconfig.yaml'),
    TEMPORAL_ALLOW_NO_AUTH: 'true',
    LOG_LEVEL: 'warn',
    ...o.ports,
  };
}

/** The server's two databases (default: temporal and temporal_visibility, as docker-compose.yml names them). */
export interface TemporalDatabases {
  history: string;
  visibility: string;
}

/**
 * A free loopback port below 32768: Temporal's SQL schema keeps a member's port in a SMALLINT
 * (cluster_membership.rpc_port), so a port from the kernel's ephemeral range fails the server at start.
 */
async function freeLowPort(taken: string[]): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const want = 20000 + Math.floor(Math.random() * 12000);
    if (!taken.includes(String(want)) && (await freePort('127.0.0.1', want)) === want) return want;
  }
  throw new Error('no free loopback port below 32768');
}

async function waitForFrontend(address: string, child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
      throw new Error(`Temporal server exited (code ${child.exitCode}, signal ${child.signalCode}):\n${tail}`);
    }
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await conn.healthService.check({});
        return;
      } finally {
        await conn.close();
      }
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`Temporal server at ${address} did not answer within ${timeoutMs} ms: ${String(e)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/**
 * Makes the schema in the PostgreSQL server of `pgUrl`, starts the server and registers the namespace and
 * the search attributes. `dir` receives the server's log.
 */
export async function startTemporalServer(o: {
  pgUrl: string;
  dir: string;
  namespace?: string;
  /** Other database names, for a server that shares a PostgreSQL with others (a benchmark on DATABASE_URL's server). */
  databases?: TemporalDatabases;
  /** Another dynamic configuration than ops/temporal/dynamicconfig.yaml (bench/temporal-idle.ts compares two). */
  dynamicConfigFile?: string;
  log?: (l: string) => void;
}): Promise<TemporalServer> {
  const { server, sqlTool } = await temporalServerBinaries();
  const cli = resolveTemporalCli();
  if (!cli) throw new Error('the Temporal CLI is missing: node scripts/setup-temporal.js installs it');
  const log = o.log ?? (() => undefined);
  const pg = new URL(o.pgUrl);
  const namespace = o.namespace ?? 'default';
  const reported = await run(server, ['--version']).then((r) => `${r.stdout}${r.stderr}`);
  if (!reported.includes(TEMPORAL_SERVER_VERSION)) throw new Error(`${server} is not Temporal ${TEMPORAL_SERVER_VERSION} (${reported.trim()}): node scripts/setup-temporal-server.js`);
  const t0 = Date.now();
  await run('sh', [path.join(OPS_DIR, 'setup-schema.sh')], {
    env: {
      ...process.env, TEMPORAL_SQL_TOOL: sqlTool, SQL_HOST: pg.hostname, SQL_PORT: pg.port || '5432',
      SQL_USER: decodeURIComponent(pg.username), SQL_PASSWORD: decodeURIComponent(pg.password),
      ...(o.databases ? { DBNAME: o.databases.history, VISIBILITY_DBNAME: o.databases.visibility } : {}),
    },
    timeout: 120_000,
  });
  log(`Temporal schema ready in ${Date.now() - t0} ms`);

  const ports: Record<string, string> = {};
  for (const v of PORT_VARIABLES) ports[v] = String(await freeLowPort(Object.values(ports)));
  const env = temporalServerEnv({ pgUrl: o.pgUrl, ports, databases: o.databases, dynamicConfigFile: o.dynamicConfigFile });
  const address = `127.0.0.1:${ports.FRONTEND_GRPC_PORT}`;
  fs.mkdirSync(o.dir, { recursive: true });
  const logFile = path.join(o.dir, 'temporal-server.log');
  let child: ChildProcess | undefined;

  const launch = async () => {
    const fd = fs.openSync(logFile, 'a');
    // It dies with this process (parent-death signal), so a crashed test run leaves no server behind.
    const [cmd, args] = dieWithParent(server, ['--config-file', path.join(OPS_DIR, 'config.yaml'), 'start']);
    child = spawn(cmd, args, {
      // Only what the server needs: the config's variables and a PATH, nothing of the test's environment.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', fd, fd],
    });
    fs.closeSync(fd);
    await waitForFrontend(address, child, logFile, 120_000).catch(async (e: unknown) => {
      await halt('SIGKILL'); // a server that never answered is not left running
      throw e;
    });
  };
  const halt = async (signal: 'SIGKILL' | 'SIGTERM') => {
    const c = child;
    if (!c?.pid || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    process.kill(c.pid, signal);
    const timer = setTimeout(() => c.pid && isAlive(c.pid) && process.kill(c.pid, 'SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  };

  const t1 = Date.now();
  await launch();
  log(`Temporal server ${TEMPORAL_SERVER_VERSION} answering at ${address} after ${Date.now() - t1} ms`);
  try {
    await run('sh', [path.join(OPS_DIR, 'setup-namespace.sh')], {
      env: { ...process.env, TEMPORAL_CLI: cli, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace },
      timeout: 180_000,
    });
  } catch (e) {
    await halt('SIGKILL');
    throw e;
  }
  log(`namespace ${namespace} and search attributes registered after ${Date.now() - t1} ms`);
  return {
    address,
    namespace,
    version: TEMPORAL_SERVER_VERSION,
    env,
    logFile,
    pid: () => child?.pid,
    alive: () => Boolean(child && child.exitCode === null && child.signalCode === null),
    async restart(signal = 'SIGKILL') {
      const t = Date.now();
      await halt(signal);
      await launch();
      return { downMs: Date.now() - t };
    },
    async stop() {
      await halt('SIGTERM');
    },
  };
}
