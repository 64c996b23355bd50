/**
 * What the production Temporal server (ops/temporal: 512 history shards on PostgreSQL) costs with no
 * workflow running: CPU of the server process and of its PostgreSQL sessions, with the gateway's dynamic
 * configuration against the same file without its queue-checkpoint settings (Temporal's defaults: each
 * shard's queues checkpoint every 30 s and poll every minute). The settings alternate, each on a fresh
 * server and databases on the same PostgreSQL; the ratio is the gateway's file over the defaults, per round.
 *
 *   npx tsx bench/temporal-idle.ts                       (DATABASE_URL: the server to use; else a throw-away cluster)
 *   npx tsx bench/temporal-idle.ts --rounds 3 --settle-s 40 --window-s 60
 *
 * --settle-s: wait after the namespace is registered (the shards' first acquisition is not idle work);
 * --window-s: the measured window. CPU from /proc (utime + stime) of the server's PID and of the
 * PostgreSQL backends serving its two databases (pg_stat_activity).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { parse, stringify } from 'yaml';
import { OPS_DIR, startTemporalServer } from '../test/helpers/temporal-server';
import { cpuSeconds } from './lib/cpu';
import { benchServer, type BenchServer } from './lib/database';

const { values: flags } = parseArgs({
  options: { rounds: { type: 'string', default: '2' }, 'settle-s': { type: 'string', default: '40' }, 'window-s': { type: 'string', default: '60' } },
});
const ROUNDS = Math.max(1, Number(flags.rounds));
const SETTLE_S = Number(flags['settle-s']);
const WINDOW_S = Number(flags['window-s']);
/** The settings the comparison leaves out: the history queues' checkpoint and poll intervals. */
const QUEUE_SETTING = /^history\.[a-zA-Z]+Processor(UpdateAckInterval|MaxPollInterval)$/;

/** CPU seconds of each backend serving `databases`, by PID (the server must run on this machine). */
async function backendCpu(url: string, databases: string[]): Promise<Map<number, number>> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = ANY($1)', [databases]);
    return new Map(rows.map((r) => [r.pid, cpuSeconds(r.pid)]));
  } finally {
    await c.end();
  }
}

interface Leg {
  temporal: number;
  postgres: number;
}

async function measure(server: BenchServer, dynamicConfigFile: string, dir: string): Promise<Leg> {
  const databases = { history: server.reserve('gw_idle_temporal'), visibility: server.reserve('gw_idle_temporal_visibility') };
  const t = await startTemporalServer({ pgUrl: server.url, dir, databases, dynamicConfigFile });
  try {
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const pid = t.pid()!;
    const names = [databases.history, databases.visibility];
    const [t0, pg0] = [cpuSeconds(pid), await backendCpu(server.url, names)];
    await new Promise((r) => setTimeout(r, WINDOW_S * 1000));
    const [t1, pg1] = [cpuSeconds(pid), await backendCpu(server.url, names)];
    // A backend that ended within the window is left out (the pools keep theirs: maxConnLifetime 1 h).
    let postgres = 0;
    for (const [p, s] of pg1) postgres += s - (pg0.get(p) ?? 0);
    return { temporal: t1 - t0, postgres };
  } finally {
    await t.stop();
  }
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-temporal-idle-'));
  const ops = path.join(OPS_DIR, 'dynamicconfig.yaml');
  const parsed = parse(fs.readFileSync(ops, 'utf8')) as Record<string, unknown>;
  const left = Object.keys(parsed).filter((k) => QUEUE_SETTING.test(k));
  const defaults = path.join(dir, 'dynamicconfig-defaults.yaml');
  fs.writeFileSync(defaults, stringify(Object.fromEntries(Object.entries(parsed).filter(([k]) => !QUEUE_SETTING.test(k)))));
  console.log(`Temporal server idle, ${WINDOW_S} s windows after ${SETTLE_S} s; defaults = ops/temporal/dynamicconfig.yaml without ${left.join(', ') || '(none)'}`);
  const server = await benchServer();
  const pct = (s: number) => `${((100 * s) / WINDOW_S).toFixed(1)} %`;
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      // Rotating order, so that neither setting always runs first.
      const order: [string, string][] = round % 2 ? [['gateway', ops], ['defaults', defaults]] : [['defaults', defaults], ['gateway', ops]];
      const legs: Record<string, Leg> = {};
      for (const [name, file] of order) legs[name] = await measure(server, file, path.join(dir, `${name}-${round}`));
      const g = legs.gateway.temporal + legs.gateway.postgres;
      const d = legs.defaults.temporal + legs.defaults.postgres;
      console.log(
        `round ${round}: gateway ${pct(g)} of a core (server ${pct(legs.gateway.temporal)}, PostgreSQL ${pct(legs.gateway.postgres)}); ` +
          `defaults ${pct(d)} (server ${pct(legs.defaults.temporal)}, PostgreSQL ${pct(legs.defaults.postgres)}); ratio ${(g / d).toFixed(2)}`,
      );
    }
  } finally {
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
