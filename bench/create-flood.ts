/**
 * Creates under a flood (issue 56): 200 connections of anonymous creates of one ticker for BENCH_SECONDS,
 * while an honest merchant (a process of its own, running before the flood starts) creates once a second, for sol (the worker's pre-derived pool) and eth (xpub
 * derivation), from one flooding address and from many. Real PostgreSQL (DATABASE_URL's server, or a
 * throw-away cluster), the production API process (src/entry/api.ts) behind a trusted "proxy" (TRUST_PROXY=
 * loopback: each client is named by X-Forwarded-For), and the worker's part played here: the public material
 * published and Solana's pool topped up every second (src/addresses/public-material.ts).
 *
 *   npm run bench -- create-flood.ts
 *   (BENCH_SECONDS per scenario, default 60; BENCH_CONNECTIONS, default 200; BENCH_ONLY=sol or eth;
 *    BENCH_MODES=one,many; CREATE_RATE_LIMIT and ADDRESS_POOL_SIZE as the gateway reads them)
 *
 * Prints per scenario: creates answered 200 a second, the answers by HTTP status and error code, the pool's
 * free addresses at the end, and the honest merchant's creates: how many succeeded, their p50, p99 and max.
 * The machine may be shared: the figures of one run compare with each other, not across machines.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import * as bip39 from 'bip39';
import type { ChainRuntimeConfig } from '../src/chains/config';
import { deriveAddressIn } from '../src/chains/addresses';
import { HdSeed } from '../src/chains/keys';
import { loadConfig } from '../src/config';
import { openPostgres } from '../src/db/client';
import { poolFree } from '../src/db/queries/public-material';
import { startPublisher } from '../src/addresses/public-material';
import { BENCH_NETWORKS, benchChainEnv, freePort, startChild } from './api-setup';
import { benchServer } from './lib/database';
import { quantile } from './lib/quantile';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 200);
const TICKERS = (process.env.BENCH_ONLY ?? 'sol,eth').split(',');
const MODES = (process.env.BENCH_MODES ?? 'one,many').split(',') as Array<'one' | 'many'>;
const cfg = loadConfig(process.env);

const merchantSeed = HdSeed.fromMnemonic(bip39.generateMnemonic());
const OUT: Record<string, string> = { sol: deriveAddressIn(merchantSeed, 'solana', 'mainnet', 0n), eth: deriveAddressIn(merchantSeed, 'ethereum', 'mainnet', 0n) };

let serial = 0;
const callback = (who: string) => `https://shop.example/flood/${process.pid}/${who}/${++serial}`;
/** One flooding address, or a new one of 10.0.0.0/8 for every request (a flood from many machines). */
const flooder = (mode: 'one' | 'many') =>
  mode === 'one' ? '203.0.113.66' : `10.${(serial >> 16) & 255}.${(serial >> 8) & 255}.${serial & 255}`;

interface Honest {
  ok: number;
  total: number;
  latencies: number[];
  failures: Record<string, number>;
}

/**
 * The honest merchant (bench/lib/honest-merchant.ts) in its own process, already running (one create made)
 * when the flood starts: `go` starts its once-a-second creates, `result` is what they met.
 */
async function honestMerchant(base: string, ticker: string): Promise<{ go: () => void; result: Promise<Honest> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'lib/honest-merchant.ts'), base, ticker, OUT[ticker], String(SECONDS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let text = '';
  const result = new Promise<Honest>((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(text.replace(/^warm\n/, '')) as Honest) : reject(new Error(`the honest merchant exited with ${code}`))));
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.startsWith('warm\n')) resolve();
    });
    result.catch(reject);
  });
  return { go: () => child.stdin.write('go\n'), result };
}

async function flood(base: string, ticker: string, mode: 'one' | 'many') {
  const answers: Record<string, number> = {};
  let ok = 0;
  const honest = await honestMerchant(base, ticker);
  honest.go();
  const result = await autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [
      {
        method: 'POST',
        path: `/api/${ticker}/create`,
        setupRequest: (req) => ({
          ...req,
          headers: { 'content-type': 'application/json', 'x-forwarded-for': flooder(mode) },
          body: JSON.stringify({ callback_url: callback('flood'), address_out: OUT[ticker] }),
        }),
        onResponse: (status, body) => {
          if (status === 200) return void ok++;
          let code = '';
          try {
            code = String((JSON.parse(body) as { code?: number }).code);
          } catch {
            code = 'no JSON body';
          }
          answers[`${status} ${code}`] = (answers[`${status} ${code}`] ?? 0) + 1;
        },
      },
    ],
  });
  const h = await honest.result;
  return { result, ok, answers, honest: h };
}

const fmt = (ms: number | undefined) => (ms === undefined ? '-' : `${ms.toFixed(0)} ms`);

async function main(): Promise<void> {
  const server = await benchServer();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-bench-flood-'));
  let api: Awaited<ReturnType<typeof startChild>> | undefined;
  let publisher: { stop(): Promise<void> } | undefined;
  const dbUrl = await server.database();
  const database = await openPostgres(dbUrl, { max: 4 });
  try {
    const chains: ChainRuntimeConfig = {};
    for (const n of BENCH_NETWORKS) chains[n] = { mode: 'mainnet', rpcUrl: 'http://127.0.0.1:1', contracts: {} };
    // The worker's part: xpubs published, Solana's pool kept at ADDRESS_POOL_SIZE free, topped up every second.
    const seed = HdSeed.fromMnemonic(bip39.generateMnemonic(256));
    publisher = await startPublisher({ db: database.db, seed, chains, poolSize: cfg.addressPoolSize, withLock: database.withLock }, 10_000, (e) =>
      console.error('pool top-up failed:', (e as Error).message),
    );
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...benchChainEnv(),
      DATABASE_URL: dbUrl,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      PORT: String(port),
      HOST: '127.0.0.1',
      PRICE_SOURCE: 'none',
      TRUST_PROXY: 'loopback',
    };
    for (const k of ['METRICS_PORT', 'LOG_LEVEL', 'GATEWAY_MNEMONIC', 'GATEWAY_MNEMONIC_FILE', 'SIGNING_KEY_PEM', 'SIGNING_KEY_FILE', 'PRICE_SOURCE_URL']) delete env[k];
    api = await startChild('API', 'src/entry/api.ts', env, path.join(dir, 'api.log'), async () => (await fetch(`${base}/api/health`)).status === 200);
    console.log(
      `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ` +
        `${SECONDS} s per scenario at ${CONNECTIONS} connections; CREATE_RATE_LIMIT ${cfg.createRateLimit}/min, ADDRESS_POOL_SIZE ${cfg.addressPoolSize}`,
    );
    for (const ticker of TICKERS) {
      for (const mode of MODES) {
        const { result, ok, answers, honest } = await flood(base, ticker, mode);
        const lat = [...honest.latencies].sort((a, b) => a - b);
        console.log(
          `${ticker} flood from ${mode === 'one' ? 'one address' : 'many addresses'}: ${(ok / SECONDS).toFixed(1)} creates/s answered 200 ` +
            `(${result.requests.total} requests, ${result.errors} connection errors, ${result.timeouts} timeouts); other answers ${JSON.stringify(answers)}; ` +
            `pool free at the end ${ticker === 'sol' ? await poolFree(database.db, 'solana') : '-'}`,
        );
        console.log(
          `  honest merchant (1 create/s): ${honest.ok}/${honest.total} answered 200, p50 ${fmt(quantile(lat, 0.5))}, p99 ${fmt(quantile(lat, 0.99))}, ` +
            `max ${fmt(lat.length ? Math.max(...lat) : undefined)}${Object.keys(honest.failures).length ? `; failures ${JSON.stringify(honest.failures)}` : ''}`,
        );
        // The pool back to full (and the last answers drained) before the next scenario.
        await new Promise((r) => setTimeout(r, 3_000));
      }
    }
  } finally {
    await api?.stop();
    await publisher?.stop();
    await database.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
