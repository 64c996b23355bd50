import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { startShop } from './order-book';
import { startDevnets } from '../../devnet';
import { HdSeed } from '../../src/chains/keys';
import { ensureDefaultKey } from '../../src/callbacks/signer';
import { ASSETS } from '../../src/domain/assets';
import { freePort } from '../../devnet/devserver';
import { startPgServer } from '../helpers/pg-server';
import { startTemporalServer } from '../helpers/temporal-server';
import { drillChains } from './drill-chains';
import { stuckEvidence, type StuckEvidence } from './drill-evidence';
import { createSupervisor, DRILL_PROCESS_ENV, spawnGateway } from './drill-procs';
import { settleAndJudge, type DrillConfig, type DrillCounts, type VerdictDetail } from './drill-verdict';
import { killForwardingWorker, searchAttributeCounts, type SearchAttributeCounts } from './production-topology-probes';

/**
 * The production topology (docker-compose.yml without Docker): one API process and two worker processes
 * (the image's entry points), with the opt-in worker of its own for Litecoin (compose's profile utxo-worker:
 * LITECOIN_TASK_QUEUE and WORKER_TASK_QUEUE), one PostgreSQL holding the gateway's database and Temporal's two, and the
 * Temporal server of ops/temporal on it with SQL visibility and the gateway's search attributes. Deposits
 * come in three waves, each followed by one fault while their lifecycles run: a worker SIGKILLed while a
 * forward is stored but not yet included, the Temporal server SIGKILLed and started again, PostgreSQL
 * restarted under both. The verdict is counted on chain by the drill's judge (drill-verdict.ts).
 */
export const TOPOLOGY_TICKERS = ['eth', 'erc20_usdt', 'sol', 'sol_usdc', 'ltc'] as const;
/** Litecoin's deposit workflows run here, on the worker of their own. */
export const UTXO_QUEUE = 'gateway-utxo';

export interface TopologyReport {
  counts: DrillCounts;
  detail: VerdictDetail;
  events: string[];
  /** The worker SIGKILLed mid-forward: which one and why it was the one. */
  killed: string | null;
  temporalDownMs: number | null;
  pgDownMs: number | null;
  /** The Temporal server outlived the PostgreSQL restart: the same process answered to the end. */
  temporalSurvivedPgRestart: boolean | null;
  searchAttributes: SearchAttributeCounts;
  settled: boolean;
  stuck: StuckEvidence[];
  durationMs: number;
  logDir: string;
}

/** Base units, above every minimum and fee with room, a little different per deposit. */
const AMOUNTS: Record<string, bigint> = { eth: 50_000_000_000_000_000n, erc20_usdt: 20_000_000n, sol: 1_000_000_000n, sol_usdc: 15_000_000n, ltc: 20_000_000n };

export async function runProductionTopology(o: { waves: number; settleMs: number; log?: (l: string) => void }): Promise<TopologyReport> {
  const started = Date.now();
  const events: string[] = [];
  const stage = (s: string) => {
    const line = `[${((Date.now() - started) / 1000).toFixed(0)} s] ${s}`;
    events.push(line);
    o.log?.(line);
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-topology-'));
  const logDir = path.join(dir, 'logs');
  const stops: Array<() => Promise<void>> = [];
  try {
    // One PostgreSQL for everything, as in docker-compose.yml: the gateway's database and Temporal's two.
    const pg = await startPgServer({ maxConnections: 400 });
    stops.push(() => pg.stop());
    const admin = new Pool({ connectionString: pg.url, max: 1 });
    await admin.query('CREATE DATABASE gateway');
    await admin.end();
    const gatewayDb = pg.url.replace(/\/postgres$/, '/gateway');
    const temporal = await startTemporalServer({ pgUrl: pg.url, dir: logDir, log: stage });
    stops.push(() => temporal.stop());
    const seed = HdSeed.loadOrCreate({ dataDir: dir });
    // The local Bitcoin and Bitcoin Cash nodes stay off, as in the drill: its coins are these five.
    const devnets = await startDevnets(path.join(dir, 'devnet'), {
      seed, ethBlockTime: 1, ltcBlockIntervalMs: 0, solSlotTimeMs: 400, bitcoin: false, bitcoincash: false,
    });
    stops.push(() => devnets.stop());
    const st = devnets.state;

    const publicKey = createPublicKey(fs.readFileSync(ensureDefaultKey(dir), 'utf8')).export({ type: 'spki', format: 'pem' }) as string;
    const { orders, merchant, merchantUrl } = await startShop(publicKey, stops);

    const apiPort = await freePort('127.0.0.1');
    const sup = createSupervisor(logDir, {
      ...devnets.env,
      DATA_DIR: dir,
      DATABASE_URL: gatewayDb,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      TEMPORAL_TASK_QUEUE: 'gateway',
      LITECOIN_TASK_QUEUE: UTXO_QUEUE,
      ...DRILL_PROCESS_ENV,
    });
    stops.push(() => sup.stopAll());
    const { api, workers, until } = spawnGateway(sup, apiPort, 'production topology', { 'worker-utxo': { WORKER_TASK_QUEUE: UTXO_QUEUE, WORKER_NICE: '0' } });
    await until(() => api.ready() && workers.every((w) => w.ready()), 240_000, 'API and workers ready');
    stage('API, two workers and the UTXO worker ready');
    const base = `http://127.0.0.1:${apiPort}/api`;

    const chains = await drillChains(st);
    stops.push(async () => chains.close());
    const configs: DrillConfig[] = [];
    for (const ticker of TOPOLOGY_TICKERS) {
      const callbackUrl = `${merchantUrl}/topology/${ticker}?order=${ticker}`;
      const addressOut = await chains.payoutAddress(ticker);
      const confirmations = ASSETS[ticker].network === 'solana' ? {} : { confirmations: 2 };
      const res = await fetch(`${base}/${ticker}/create`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ callback_url: callbackUrl, address_out: addressOut, post: 1, json: 1, pending: 1, ...confirmations }),
      });
      const body = (await res.json()) as Record<string, string>;
      if (res.status !== 200) throw new Error(`create ${ticker} → ${res.status} ${JSON.stringify(body)}`);
      orders.add(callbackUrl, ticker, body);
      configs.push({ ticker, callbackUrl, addressIn: body.address_in, addressOut, deposits: [] });
    }
    let mining = true;
    const miner = (async () => {
      while (mining) {
        await chains.mineLtc(1).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    stops.push(async () => {
      mining = false;
      await miner;
    });

    const db = new Pool({ connectionString: gatewayDb, max: 1, connectionTimeoutMillis: 2000 });
    db.on('error', () => undefined); // the PostgreSQL restart ends its connection too
    stops.push(() => db.end().catch(() => undefined));
    const count = async (where: string) => Number((await db.query<{ n: string }>(`SELECT count(*) n FROM payments WHERE ${where}`).catch(() => ({ rows: [{ n: '-1' }] }))).rows[0].n);
    let paid = 0;
    const wave = async (i: number) => {
      for (const c of configs) {
        const deposits = await chains.pay(c.ticker, c.addressIn, [AMOUNTS[c.ticker] + BigInt(i * 1000 + c.deposits.length)]);
        c.deposits.push(...deposits);
        paid += deposits.length;
      }
      stage(`wave ${i + 1} paid (${paid} deposits in all)`);
      await until(async () => (await count('true')) >= paid, 120_000, `wave ${i + 1} recorded`);
    };

    // Fault 1: a worker SIGKILLed while a forward is signed and stored but not yet included.
    await wave(0);
    await until(async () => (await count('forward_raw IS NOT NULL AND snapshot IS NULL')) > 0, 180_000, 'a forward in flight');
    const killed = await killForwardingWorker(gatewayDb, temporal.address, temporal.namespace, workers);
    stage(`SIGKILL ${killed}`);
    await new Promise((r) => setTimeout(r, 1500));
    for (const w of workers) if (!w.alive()) w.start();

    // Fault 2: the Temporal server crashes (SIGKILL) and starts again on the same ports and database.
    let temporalDownMs: number | null = null;
    if (o.waves > 1) {
      await wave(1);
      temporalDownMs = (await temporal.restart('SIGKILL')).downMs;
      stage(`Temporal server SIGKILLed and answering again after ${temporalDownMs} ms`);
    }
    // Fault 3: PostgreSQL restarted (fast shutdown) under the gateway and the Temporal server at once.
    let pgDownMs: number | null = null;
    let temporalPid: number | undefined;
    if (o.waves > 2) {
      await wave(2);
      temporalPid = temporal.pid();
      pgDownMs = (await pg.restart()).downMs;
      stage(`PostgreSQL restarted, down ${pgDownMs} ms`);
    }

    const { settled, logs, counts, detail } = await settleAndJudge({
      base, chains, configs, received: merchant.received, processDeaths: sup.deaths.length, settleMs: o.settleMs, pollMs: 2000, stage,
    });
    const sample = [...logs.values()].map((r) => r[0]?.uuid).filter((u): u is string => Boolean(u));
    // SQL visibility is written by the server's visibility queue, one task at a time and after the workflow task
    // (ops/temporal/dynamicconfig.yaml): read until it shows every payment done, for at most 30 s.
    let searchAttributes = await searchAttributeCounts(temporal.address, temporal.namespace, TOPOLOGY_TICKERS, sample);
    for (const until = Date.now() + 30_000; searchAttributes.done < TOPOLOGY_TICKERS.length * o.waves && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 1000));
      searchAttributes = await searchAttributeCounts(temporal.address, temporal.namespace, TOPOLOGY_TICKERS, sample);
    }
    const stuck = await stuckEvidence(gatewayDb, temporal.address, temporal.namespace).catch(() => [] as StuckEvidence[]);
    for (const d of sup.deaths) stage(`death: ${d.name} code=${d.code} signal=${d.signal}: ${d.why}`);
    const temporalSurvivedPgRestart = temporalPid === undefined ? null : temporal.pid() === temporalPid && temporal.alive();
    return {
      counts, detail, events, killed, temporalDownMs, pgDownMs, temporalSurvivedPgRestart, searchAttributes, settled, stuck,
      durationMs: Date.now() - started,
      logDir: path.join(os.tmpdir(), `gw-topology-logs-${path.basename(dir)}`),
    };
  } finally {
    for (const s of stops.reverse()) await s().catch(() => undefined);
    if (fs.existsSync(logDir)) fs.cpSync(logDir, path.join(os.tmpdir(), `gw-topology-logs-${path.basename(dir)}`), { recursive: true });
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
