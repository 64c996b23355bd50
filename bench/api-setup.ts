/**
 * The stage of bench/api.ts: a throw-away database with the worker's public material (xpubs of a seed
 * generated now and never written anywhere), one configuration with a few payments and delivery attempts
 * for the logs endpoint, and the two servers under test as child processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import * as bip39 from 'bip39';
import { Client } from 'pg';
import { deriveAddressIn } from '../src/chains/addresses';
import { HdSeed } from '../src/chains/keys';
import { openPostgres } from '../src/db/client';
import { publishPublicMaterial } from '../src/addresses/public-material';
import type { ChainRuntimeConfig } from '../src/chains/config';

const ROOT = path.resolve(__dirname, '..');

/** The networks the API serves in the bench (their RPC URLs are never called by the API). */
export const BENCH_NETWORKS = ['bitcoin', 'litecoin', 'ethereum', 'solana'];

export function benchChainEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const n of BENCH_NETWORKS) env[`${n.toUpperCase()}_RPC_URL`] = 'http://127.0.0.1:1';
  return env;
}

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** A database of its own on DATABASE_URL's server, migrated, with the public material published. */
export async function benchDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `gw_bench_api_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  const database = await openPostgres(u.toString(), { max: 2 });
  const chains: ChainRuntimeConfig = {};
  for (const n of BENCH_NETWORKS) chains[n] = { mode: 'mainnet', rpcUrl: 'http://127.0.0.1:1', contracts: {} };
  const seed = HdSeed.fromMnemonic(bip39.generateMnemonic(256));
  await publishPublicMaterial({ db: database.db, seed, chains, poolSize: 10 });
  await database.close();
  return {
    url: u.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * Payments and delivery attempts of one existing configuration, as the worker leaves them. `waiting`: the
 * last one is a mined deposit still waiting for finality (its logs count confirmations from the chain's
 * tip, at height 105 here).
 */
export async function seedLogs(url: string, callbackUrl: string, payments: number, attemptsEach: number, waiting = false): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ id: string }>('SELECT id FROM payment_configs WHERE callback_url = $1', [callbackUrl]);
    for (let i = 0; i < payments; i++) {
      const txid = '0x' + randomBytes(32).toString('hex');
      const pending = waiting && i === payments - 1;
      const { rows: p } = await c.query<{ uuid: string }>(
        `INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, block_number, value_base, forwarded_base, fee_base,
           fee_percent, price, confirmations, result, txid_out, last_update)
         VALUES ($1, 'eth', 'ethereum', $2, $3, 100, '1000000000000000000', '990000000000000000', '10000000000000000', '1.00', '3000.00', $4,
           $5, $6, now()) RETURNING uuid`,
        [rows[0].id, `deposit:ethereum:${txid}:-1`, txid, pending ? 1 : 12, pending ? 'pending' : 'done', pending ? null : '0x' + randomBytes(32).toString('hex')],
      );
      for (let a = 1; a <= attemptsEach; a++) {
        await c.query(
          `INSERT INTO delivery_attempts (payment_uuid, stage, attempt, request_url, response_body, response_status, next_try, pending, confirmed)
           VALUES ($1, 'confirmed', $2, $3, $4, $5, $6, 0, $7)`,
          [p[0].uuid, a, callbackUrl, a < attemptsEach ? 'busy' : 'ok', a < attemptsEach ? 503 : 200, a < attemptsEach ? new Date() : null, a < attemptsEach ? 0 : 1],
        );
      }
    }
    if (waiting) {
      await c.query(`INSERT INTO chain_cursors (network, height, block_hash) VALUES ('ethereum', 105, '0x00') ON CONFLICT (network) DO UPDATE SET height = 105`);
    }
  } finally {
    await c.end();
  }
}

export interface Child {
  name: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts a TypeScript entry point in one node process (tsx as its loader; `nodeArgs` such as --cpu-prof
 * reach it), its output to `logFile`, and waits until `ready()` holds.
 */
export async function startChild(
  name: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  logFile: string,
  ready: () => Promise<boolean>,
  nodeArgs: string[] = [],
): Promise<Child> {
  const out = fs.openSync(logFile, 'a');
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, entry)], { cwd: ROOT, env, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode} before it was ready; see ${logFile}`);
    if (await ready().catch(() => false)) break;
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${name} not ready within 60 s; see ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    name,
    proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A merchant payout address for the bench: from another generated seed, never one of the gateway's. */
export function merchantEthAddress(): string {
  return deriveAddressIn(HdSeed.fromMnemonic(bip39.generateMnemonic()), 'ethereum', 'mainnet', 0n);
}
