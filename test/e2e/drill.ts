import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startShop } from './order-book';
import { startDevnets, type Devnets } from '../../devnet';
import { HdSeed } from '../../src/chains/keys';
import { ensureDefaultKey } from '../../src/callbacks/signer';
import { ASSETS } from '../../src/domain/assets';
import { formatUnits } from '../../src/domain/money';
import { SEARCH_ATTRIBUTE_CLI_TYPES } from '../../src/domain/search-attributes';
import { resolveTemporalCli } from '../../src/temporal/binaries';
import { freePort, startDevServer } from '../../devnet/devserver';
import { startHostileRpc, type FaultKind, type HostileRpc, type HostileRpcStats } from '../helpers/hostile-rpc';
import { seededRandom } from '../helpers/hostile-rpc-answers';
import { startPgServer } from '../helpers/pg-server';
import { startChaos } from './drill-chaos';
import { drillChains, type Deposit } from './drill-chains';
import { createDrillConfigs, getJson, readMinimums, shownMinimums, watchMinimums } from './drill-configs';
import { stuckEvidence, type StuckEvidence } from './drill-evidence';
import { probeNodes, type NodeOutage } from './drill-health';
import { createSupervisor, DRILL_PROCESS_ENV, spawnGateway } from './drill-procs';
import { settleAndJudge, type DrillCounts, type VerdictDetail } from './drill-verdict';


/** The slot time of a full-size drill's surfnet (a drill's config may set its own, as the CI drill does). */
const SURFNET_DRILL_SLOT_MS = 1200;
/**
 * The money-integrity drill (STYLE habit 8): the production topology (one API process, two worker
 * processes, one PostgreSQL, one Temporal dev server) on local chains whose RPC reaches the gateway only
 * through hostile proxies; deposits in groups to each address_in; workers SIGKILLed at activity
 * boundaries; PostgreSQL restarted once mid-run. Then calm: proxies faithful, every worker up, chains
 * mined until everything settles or the deadline passes. The verdict is counted on chain (drill-verdict).
 */
export const DRILL_TICKERS = ['eth', 'erc20_usdt', 'sol', 'sol_usdc', 'ltc'] as const;

/** How long the Litecoin node refuses every broadcast for relay policy, from the gateway's first one. */
const LTC_POLICY_REFUSAL_MS = 45_000;

export interface DrillOptions {
  tickers?: readonly string[];
  configsPerTicker: number;
  depositsPerConfig: number;
  seed?: number;
  faults?: Partial<Record<FaultKind, number>>;
  killProbability?: number;
  killGapMs?: [number, number];
  /** PostgreSQL restarts once this share of the deposit groups has been paid. */
  pgRestartAt?: number;
  /** Bound on the settling phase after the last payment. */
  settleMs: number;
  /**
   * Chaos goes on after the last payment for at least `chaosMinMs`, until `chaosUntilShare` of the
   * deposits have a forward stored (or failed), for at most `chaosMaxMs`; then the calm.
   */
  chaosMinMs?: number;
  chaosMaxMs?: number;
  chaosUntilShare?: number;
  /** Surfnet's slot time (default SURFNET_DRILL_SLOT_MS, sized for the full-size drill). */
  solSlotTimeMs?: number;
  log?: (line: string) => void;
}

/** The drill's lies beyond the random faults, and what came of them, counted on chain. */
export interface DrillSpecials {
  /** One deposit of exactly the published minimum of each ticker (read from /api/cryptocurrencies), and how many ended done. */
  minimumDeposits: number;
  minimumDone: number;
  minimums: Record<string, string>;
  /** The tickers whose minimum deposit did not end done, with the results the merchant's logs show for it. */
  minimumNotDone: string[];
  /** Sends of a Solana forward answered as relayed and never passed on (re-sends included), its distinct signatures, and how many of those are on chain (must be 0: a re-signed forward paid instead). */
  swallowedSends: number;
  swallowedSignatures: string[];
  swallowedLanded: number;
  /** Litecoin broadcasts refused for relay policy ('min relay fee not met', -26) in the refusal window. */
  policyRefusals: number;
  /** ETH deposits sent by a contract (an internal call, found through call traces), and how many ended done. */
  contractDeposits: number;
  contractDone: number;
}

export interface DrillReport {
  counts: DrillCounts;
  specials: DrillSpecials;
  detail: VerdictDetail;
  /** From the start of the PostgreSQL restart until GET /api/{ticker}/logs answered 200 again. */
  recoveryMs: number | null;
  pgDownMs: number | null;
  deaths: { name: string; code: number | null; signal: string | null; atMsAfterPgRestart: number | null; why: string }[];
  kills: number;
  boundaries: number;
  faults: Record<string, HostileRpcStats>;
  settled: boolean;
  failureReasons: Record<string, number>;
  /** The local nodes' own health, probed directly: an outage of the test bed, not of the gateway. */
  nodes: Record<string, NodeOutage>;
  /** Per payment not done: its stored reason and its workflow's pending activities with their last failure. */
  stuck: StuckEvidence[];
  durationMs: number;
  logDir: string;
}

/** Base units: above every per-asset minimum and fee with room, a little different each time. */
function amountFor(ticker: string, r: () => number): bigint {
  const jitter = BigInt(Math.floor(r() * 1000));
  const base: Record<string, bigint> = { eth: 50_000_000_000_000_000n, erc20_usdt: 20_000_000n, sol: 1_000_000_000n, sol_usdc: 15_000_000n, ltc: 20_000_000n };
  return base[ticker] + jitter;
}

export async function runDrill(o: DrillOptions): Promise<DrillReport> {
  const started = Date.now();
  const log = o.log ?? (() => undefined);
  const random = seededRandom(o.seed ?? 42);
  const tickers = o.tickers ?? DRILL_TICKERS;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-drill-'));
  const logDir = path.join(dir, 'logs');
  const stops: Array<() => Promise<void>> = [];
  const stage = (s: string) => log(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${s}`);
  try {
    const pg = await startPgServer();
    stops.push(() => pg.stop());
    const temporal = await startDevServer({
      cliPath: resolveTemporalCli()!, host: '127.0.0.1', dataDir: path.join(dir, 'temporal'), namespace: 'default', port: 0, uiPort: 0,
      searchAttributes: SEARCH_ATTRIBUTE_CLI_TYPES,
    });
    stops.push(() => temporal.stop());
    const seed = HdSeed.loadOrCreate({ dataDir: dir });
    // The drill's chains are the three behind hostile proxies; the local Bitcoin and Bitcoin Cash nodes stay off.
    const devnets: Devnets = await startDevnets(path.join(dir, 'devnet'), {
      seed, ethBlockTime: 1, ltcBlockIntervalMs: 0, solSlotTimeMs: o.solSlotTimeMs ?? SURFNET_DRILL_SLOT_MS, bitcoin: false, bitcoincash: false,
    });
    stops.push(() => devnets.stop());
    const st = devnets.state;
    stage(`PostgreSQL :${pg.port}, Temporal ${temporal.address}, chains up`);
    const health = probeNodes(st);
    stops.push(() => health.stop());

    const faults = o.faults ?? {};
    const proxies: Record<string, HostileRpc> = {
      ethereum: await startHostileRpc({ upstream: st.ethereum!.rpcUrl, seed: (o.seed ?? 42) + 1, probabilities: faults, dropMode: 'mixed' }),
      solana: await startHostileRpc({ upstream: st.solana!.rpcUrl, seed: (o.seed ?? 42) + 2, probabilities: faults, dropMode: 'mixed' }),
      litecoin: await startHostileRpc({ upstream: st.litecoin!.rpcUrl, seed: (o.seed ?? 42) + 3, probabilities: faults, dropMode: 'mixed' }),
    };
    for (const p of Object.values(proxies)) stops.push(() => p.close());

    const publicKey = createPublicKey(fs.readFileSync(ensureDefaultKey(dir), 'utf8')).export({ type: 'spki', format: 'pem' }) as string;
    const { orders, merchant, merchantUrl } = await startShop(publicKey, stops);

    const apiPort = await freePort('127.0.0.1');
    const sup = createSupervisor(logDir, {
      ...devnets.env,
      ETHEREUM_RPC_URL: proxies.ethereum.url,
      SOLANA_RPC_URL: proxies.solana.url,
      LITECOIN_RPC_URL: proxies.litecoin.url,
      DATA_DIR: dir,
      DATABASE_URL: pg.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: `drill-${path.basename(dir)}`,
      ...DRILL_PROCESS_ENV,
    });
    stops.push(() => sup.stopAll());
    const { api, workers, until } = spawnGateway(sup, apiPort, 'drill');
    await until(() => api.ready() && workers.every((w) => w.ready()), 240_000, 'API and workers ready');
    stage('API and two workers ready');
    const base = `http://127.0.0.1:${apiPort}/api`;

    const chains = await drillChains(st);
    stops.push(async () => chains.close());
    // Each ticker's published minimum, as a customer reads it; one configuration per ticker pays exactly that.
    const minimums = await readMinimums(base, tickers, until);
    stage(`published minimums ${shownMinimums(tickers, minimums)}`);
    const { configs, minimumConfigs, contractConfig } = await createDrillConfigs({ base, orders, chains, merchantUrl }, tickers, o.configsPerTicker);
    stage(`${configs.length} configurations created`);
    stops.push(watchMinimums(base, tickers, minimums, stage));
    // The first forward out of a SOL address_in is swallowed until its blockhash expires (the gateway must
    // sign it again); Litecoin's node refuses every broadcast on relay policy for a while.
    const swallowTarget = configs.find((c) => c.ticker === 'sol' && !minimumConfigs.includes(c));
    if (swallowTarget) proxies.solana.swallowFirstSend(swallowTarget.addressIn);
    proxies.litecoin.refuseOnPolicy('min relay fee not met', LTC_POLICY_REFUSAL_MS);

    // Litecoin regtest mines only on request: one block a second, all run long.
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
    const [gapLo, gapHi] = o.killGapMs ?? [15_000, 45_000];
    const chaos = startChaos(pg.url, workers, {
      random, killProbability: o.killProbability ?? 0.3, minGapMs: gapLo, maxGapMs: gapHi, restartDelayMs: [200, 4000], log: stage,
    });
    let chaosStopped = false;
    stops.push(async () => { if (!chaosStopped) await chaos.stop(); });

    // PostgreSQL restart, once, with the API's recovery timed from the moment it begins.
    let recoveryMs: number | null = null;
    let pgDownMs: number | null = null;
    let pgRestartedAt: number | null = null;
    const probe = `${base}/${configs[0].ticker}/logs?callback=${encodeURIComponent(configs[0].callbackUrl)}`;
    const restartPg = async () => {
      pgRestartedAt = Date.now();
      stage('PostgreSQL restart (fast shutdown, same port and data)');
      pgDownMs = (await pg.restart()).downMs;
      const end = Date.now() + 180_000;
      while (Date.now() < end) {
        if ((await getJson(probe)).status === 200) {
          recoveryMs = Date.now() - pgRestartedAt;
          break;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      stage(`PostgreSQL back after ${pgDownMs} ms; API logs answered 200 after ${recoveryMs ?? 'never'} ms`);
    };

    // Payments: one loop per ticker, each paying its configurations' groups in turn.
    const groups = tickers.length * o.configsPerTicker;
    let paidGroups = 0;
    let pgRestart: Promise<void> | undefined;
    const payErrors: string[] = [];
    await Promise.all(
      tickers.map(async (ticker) => {
        const min = minimumConfigs.find((c) => c.ticker === ticker)!;
        try {
          min.deposits.push(...(await chains.pay(ticker, min.addressIn, [minimums[ticker]])));
        } catch (e) {
          payErrors.push(`${ticker} minimum: ${String(e).slice(0, 200)}`);
        }
        if (contractConfig?.ticker === ticker) {
          try {
            contractConfig.deposits.push(await chains.payEthByContract(contractConfig.addressIn, amountFor(ticker, random)));
          } catch (e) {
            payErrors.push(`${ticker} by contract: ${String(e).slice(0, 200)}`);
          }
        }
        for (const cfg of configs.filter((c) => c.ticker === ticker && c !== min && c !== contractConfig)) {
          const amounts = Array.from({ length: o.depositsPerConfig }, () => amountFor(ticker, random));
          let deposits: Deposit[] = [];
          try {
            deposits = await chains.pay(ticker, cfg.addressIn, amounts);
          } catch (e) {
            payErrors.push(`${ticker}: ${String(e).slice(0, 200)}`);
          }
          cfg.deposits.push(...deposits);
          paidGroups++;
          if (!pgRestart && paidGroups >= Math.ceil(groups * (o.pgRestartAt ?? 0.5))) pgRestart = restartPg();
          await new Promise((r) => setTimeout(r, 500 + random() * 2500));
        }
      }),
    );
    if (payErrors.length) stage(`customer payments that failed (not counted as deposits): ${payErrors.join(' | ')}`);
    stage(`${configs.reduce((n, c) => n + c.deposits.length, 0)} deposits paid`);
    await pgRestart;
    const total = configs.reduce((n, c) => n + c.deposits.length, 0);
    const chaosFrom = Date.now();
    for (;;) {
      const p = chaos.progress();
      const elapsed = Date.now() - chaosFrom;
      if (elapsed >= (o.chaosMaxMs ?? 180_000)) break;
      if (elapsed >= (o.chaosMinMs ?? 20_000) && p.n >= total && p.fwd + p.failed >= total * (o.chaosUntilShare ?? 0.8)) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    stage(`chaos over: ${JSON.stringify(chaos.progress())}`);

    // Calm: faithful RPC, no more kills, every worker up; settle until every deposit is done or the deadline.
    chaosStopped = true;
    await chaos.stop();
    for (const p of Object.values(proxies)) p.calm();
    stage(`calm (kills ${sup.kills}, boundaries ${chaos.boundaries()}, deaths ${sup.deaths.length})`);
    const { settled, counts, detail, logs } = await settleAndJudge({
      base, chains, configs, received: merchant.received, processDeaths: sup.deaths.length, settleMs: o.settleMs, pollMs: 3000, stage,
    });
    const stuck = await stuckEvidence(pg.url, temporal.address).catch((e: unknown) => {
      stage(`no evidence of stuck payments: ${String(e)}`);
      return [] as StuckEvidence[];
    });
    const solStats = proxies.solana.stats();
    const specials: DrillSpecials = {
      minimumDeposits: minimumConfigs.reduce((n, c) => n + c.deposits.length, 0),
      minimumDone: minimumConfigs.reduce((n, c) => n + (logs.get(c.callbackUrl) ?? []).filter((r) => r.coin === c.ticker && r.result === 'done').length, 0),
      minimums: Object.fromEntries(tickers.map((t) => [t, formatUnits(minimums[t], ASSETS[t].decimals)])),
      minimumNotDone: minimumConfigs
        .filter((c) => (logs.get(c.callbackUrl) ?? []).filter((r) => r.coin === c.ticker && r.result === 'done').length < c.deposits.length)
        .map((c) => `${c.ticker} ${formatUnits(minimums[c.ticker], ASSETS[c.ticker].decimals)}: ${(logs.get(c.callbackUrl) ?? []).map((r) => r.result).join(', ') || 'no payment'}`),
      swallowedSends: solStats.swallowed,
      swallowedSignatures: solStats.swallowedSignatures,
      swallowedLanded: await chains.solLanded(solStats.swallowedSignatures).catch(() => -1),
      policyRefusals: proxies.litecoin.stats().policyRefusals,
      contractDeposits: contractConfig?.deposits.length ?? 0,
      contractDone: contractConfig ? (logs.get(contractConfig.callbackUrl) ?? []).filter((r) => r.coin === 'eth' && r.result === 'done').length : 0,
    };
    const failureReasons: Record<string, number> = {};
    for (const s of stuck) {
      const k = `${s.result}: ${s.reason ?? s.pending[0] ?? s.workflow}`.slice(0, 200);
      failureReasons[k] = (failureReasons[k] ?? 0) + 1;
    }
    return {
      counts, specials, detail, recoveryMs, pgDownMs, kills: sup.kills, boundaries: chaos.boundaries(), settled, failureReasons, stuck, nodes: health.outages(),
      deaths: sup.deaths.map((d) => ({ name: d.name, code: d.code, signal: d.signal, atMsAfterPgRestart: pgRestartedAt ? d.at - pgRestartedAt : null, why: d.why })),
      faults: Object.fromEntries(Object.entries(proxies).map(([k, p]) => [k, p.stats()])),
      durationMs: Date.now() - started,
      logDir: path.join(os.tmpdir(), `gw-drill-logs-${path.basename(dir)}`),
    };
  } finally {
    for (const s of stops.reverse()) await s().catch(() => undefined);
    // The process logs outlive the run (evidence); everything else goes.
    if (fs.existsSync(logDir)) fs.cpSync(logDir, path.join(os.tmpdir(), `gw-drill-logs-${path.basename(dir)}`), { recursive: true });
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
