import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../devnet/devserver';
import { findPgBin, waitForPg } from './pg-server';

/**
 * Tests run against a real PostgreSQL. DATABASE_URL wins; otherwise (as in .ci/run) a throw-away
 * cluster is made with the machine's initdb and stopped by PID in global-teardown.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) return;
  const initdb = findPgBin('initdb');
  const postgres = findPgBin('postgres');
  if (!initdb || !postgres) {
    throw new Error('tests need PostgreSQL: set DATABASE_URL or install it (apt-get install -y postgresql); `bash .ci/run` does both');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-pg-'));
  const asRoot = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root; the Debian package's postgres user runs it instead.
  const wrap = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  const data = path.join(dir, 'data');
  const [c1, a1] = wrap(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  execFileSync(c1, a1, { stdio: 'ignore' });
  const port = await freePort('127.0.0.1');
  const [c2, a2] = wrap(postgres, ['-D', data, '-p', String(port), '-k', dir, '-h', '127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=300']);
  // Its log (a backend's crash, a terminated connection) beside the test files' logs, kept after the run.
  const logDir = path.join(os.tmpdir(), `gw-test-logs-${process.getuid?.() ?? 'u'}`);
  fs.mkdirSync(logDir, { recursive: true });
  const pgLog = fs.openSync(path.join(logDir, `postgresql-${port}.log`), 'w');
  const child = spawn(c2, a2, { stdio: ['ignore', pgLog, pgLog], detached: true });
  fs.closeSync(pgLog);
  child.unref();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitForPg(url, 30_000);
  process.env.DATABASE_URL = url;
  // One marker per jest run (global setup and teardown share this process): concurrent runs never stop each other's server.
  const marker = path.join(dir, 'marker.json');
  fs.writeFileSync(marker, JSON.stringify({ pid: child.pid, dir }));
  process.env.GW_TEST_PG_MARKER = marker;
}
