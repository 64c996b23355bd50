/**
 * Deposit pipeline under a burst (issues 11 and 12): the production topology (one API process, two worker
 * processes, PostgreSQL, the Temporal server on it) on the local chains, DEPOSIT_POLL_INTERVAL and
 * WATCH_INTERVAL_MS at their production defaults, so that the watcher's pushed hints are what moves each
 * deposit. One configuration per `--per-address` deposits is created through the public API with a
 * callback URL on a local receiver; then every deposit is paid at once and the run waits for every
 * confirmed callback. Per asset it prints (see bench/pipeline/report.ts):
 *   (a) block → confirmed callback, (b) the chain's bound for the same deposit and the ratio a/b,
 *   (c) history events per deposit workflow (all runs) and runs, (d) the gateway's own time after finality;
 * and for the run, the machine's busy CPU over the burst (core-s), to compare runs by.
 *
 *   npx tsx bench/pipeline.ts                                  (small: a few deposits per asset)
 *   npx tsx bench/pipeline.ts --eth 200 --erc20 50 --sol 50 --usdc 20 --ltc 20 --json out.json
 *
 * Flags: --eth --erc20 --sol --usdc --ltc (deposits per asset), --per-address (deposits per address_in,
 * default 1), --confirmations (numeric chains; default: each asset's gateway default), --eth-block-s (anvil's
 * block time, default 1; the devnet of `npm start` mines every 2 s), --sol-slot-ms
 * (surfnet slot time, default 400), --ltc-block-ms (the bench mines litecoin regtest, default 1000),
 * --watch-ms (sets WATCH_INTERVAL_MS; default: unset, the production 500 ms), --head-feed on|off (off: no
 * ETHEREUM_WS_URL / SOLANA_WS_URL / {NETWORK}_HEAD_FEED, the watchers poll only; default on, as npm start runs), --timeout-s (wait for callbacks),
 * --temporal server|dev (default server: the production Temporal server on the same PostgreSQL, as
 * docker-compose.yml runs it, built by scripts/setup-temporal-server.js; dev: the embedded dev server on
 * SQLite with one history shard, as `npm start` runs it),
 * --warmup N (default 0): first N deposits of each asset of the burst on addresses of their own, followed to
 * their confirmed callbacks before the measured burst is paid (see warmUp), --json FILE,
 * --steal F (0 < F < 1): the run on a slower machine, a process per core taking F of it all through the run
 * (bench/pipeline/steal.ts); the machine CPU printed then counts theirs too, and says how much it was.
 * DATABASE_URL, when set, names the PostgreSQL server to make a throw-away database on.
 * --steps: the workers log each step's timing (src/temporal/step-timings.ts), tabulated per asset and step: its
 * wait to start, its run, and the time since the step before it ended (bench/pipeline/steps.ts).
 * --costs: what a happy-path deposit of each family costs, the families paid one after another, each followed by
 * an idle window as long (bench/pipeline/costs.ts, docs/operator/capacity.md); the other tables then describe
 * bursts of one family at a time, and the machine CPU line counts the idle windows too.
 * --worker-of litecoin[,…]: those networks on a task queue and a third worker of their own, at nice
 * --worker-of-nice (default 0), as compose's profile utxo-worker (docs/operator/production.md).
 * BENCH_PROFILE=<dir>: the API and the workers write CPU profiles (node --cpu-prof) into <dir>/<process name>;
 * BENCH_NODE_ARGS: more node flags for them (e.g. --trace-gc, --perf-basic-prof for `perf record`).
 */
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { ASSETS } from '../src/domain/assets';
import { drillChains, type DrillChains } from '../test/e2e/drill-chains';
import { startBed, type Bed } from './pipeline/bed';
import { costTable, familyBursts, familyCost, startCostMeter } from './pipeline/costs';
import { payEvmBurst, type EvmPayment } from './pipeline/evm-burst';
import { measureDeposits, type PaidDeposit } from './pipeline/measure';
import { phases, summarise, table } from './pipeline/report';
import { startStealer, type Stealer } from './pipeline/steal';
import { readStepLines, stepTable } from './pipeline/steps';

const { values: flags } = parseArgs({
  options: {
    eth: { type: 'string', default: '6' },
    erc20: { type: 'string', default: '4' },
    sol: { type: 'string', default: '4' },
    usdc: { type: 'string', default: '3' },
    ltc: { type: 'string', default: '4' },
    'per-address': { type: 'string', default: '1' },
    confirmations: { type: 'string' },
    'eth-block-s': { type: 'string', default: '1' },
    'sol-slot-ms': { type: 'string', default: '400' },
    'ltc-block-ms': { type: 'string', default: '1000' },
    'watch-ms': { type: 'string' },
    'head-feed': { type: 'string', default: 'on' },
    temporal: { type: 'string', default: 'server' },
    'timeout-s': { type: 'string' },
    warmup: { type: 'string', default: '0' },
    json: { type: 'string' },
    steal: { type: 'string' },
    costs: { type: 'boolean', default: false },
    steps: { type: 'boolean', default: false },
    'worker-of': { type: 'string' },
    'worker-of-nice': { type: 'string', default: '0' },
  },
});
const COUNTS: Record<string, number> = { eth: Number(flags.eth), erc20_usdt: Number(flags.erc20), sol: Number(flags.sol), sol_usdc: Number(flags.usdc), ltc: Number(flags.ltc) };
const PER_ADDRESS = Math.max(1, Number(flags['per-address']));
const WARMUP = Math.max(0, Number(flags.warmup));
const TOTAL = Object.values(COUNTS).reduce((a, b) => a + b, 0);
const TIMEOUT_MS = Number(flags['timeout-s'] ?? 300 + TOTAL * 3) * 1000;

const started = Date.now();
const log = (s: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${s}`);
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');
/**
 * Busy CPU time of the whole machine so far, in core-seconds: every process (the gateway, Temporal,
 * PostgreSQL, the nodes, this bench). The same burst takes more of it when the machine runs slower, and
 * its ratios come out higher: this figure tells runs on a slow moment of a shared machine apart.
 */
const busyCoreS = () => os.cpus().reduce((s, c) => s + (c.times.user + c.times.nice + c.times.sys + c.times.irq) / 1000, 0);

/** Base units above every minimum and fee with room (as the drill pays), a little different each time. */
function amount(ticker: string, i: number): bigint {
  const base: Record<string, bigint> = { eth: 50_000_000_000_000_000n, erc20_usdt: 20_000_000n, sol: 1_000_000_000n, sol_usdc: 15_000_000n, ltc: 20_000_000n };
  return base[ticker] + BigInt(i);
}

interface Config {
  ticker: string;
  addressIn: string;
  required: number;
  deposits: number;
}

async function createConfigs(bed: Bed, chains: DrillChains, counts: Record<string, number>, label = ''): Promise<Config[]> {
  const configs: Config[] = [];
  for (const [ticker, n] of Object.entries(counts)) {
    for (let i = 0; i * PER_ADDRESS < n; i++) {
      const numeric = ASSETS[ticker].network !== 'solana';
      const body = {
        callback_url: `${bed.receiver.url}/bench/${ticker}/${label}${i}?order=${ticker}-${label}${i}`,
        address_out: await chains.payoutAddress(ticker),
        post: 1, json: 1, pending: 0,
        ...(numeric && flags.confirmations ? { confirmations: Number(flags.confirmations) } : {}),
      };
      // A dry Solana address pool (1501) refills within seconds: the bench waits, as a merchant would retry.
      for (let attempt = 1; ; attempt++) {
        const res = await fetch(`${bed.apiBase}/${ticker}/create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        const got = (await res.json()) as Record<string, unknown>;
        if (res.status === 200) {
          configs.push({ ticker, addressIn: String(got.address_in), required: numeric ? Number(got.notify_confirmations ?? got.confirmations_required ?? ASSETS[ticker].confirmations) : 1, deposits: Math.min(PER_ADDRESS, n - i * PER_ADDRESS) });
          break;
        }
        if (attempt >= 30) throw new Error(`create ${ticker} → ${res.status} ${JSON.stringify(got)}`);
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
  }
  return configs;
}

/**
 * Pays every configuration's deposits at once: the EVM transfers signed up front and sent together
 * (evm-burst.ts), Solana and Litecoin through the drill's payer, at most `limit` groups in flight per asset.
 */
async function payBurst(bed: Bed, chains: DrillChains, configs: Config[], limit = 16): Promise<{ paid: PaidDeposit[]; errors: string[]; firstAt: number; lastAt: number }> {
  const paid: PaidDeposit[] = [];
  const errors: string[] = [];
  const firstAt = Date.now();
  const evm = configs.filter((c) => ASSETS[c.ticker].network === 'ethereum');
  const evmPayments = evm.flatMap((c) => Array.from({ length: c.deposits }, (_, k) => ({ config: c, payment: { ticker: c.ticker as EvmPayment['ticker'], to: c.addressIn, amount: amount(c.ticker, k) } })));
  const paying: Promise<unknown>[] = [];
  if (evmPayments.length) {
    paying.push(
      payEvmBurst(bed.devnets.state, evmPayments.map((p) => p.payment)).then((results) =>
        results.forEach((r, i) => {
          const c = evmPayments[i].config;
          if (r.txid && !r.error) paid.push({ ticker: c.ticker, txid: r.txid, addressIn: c.addressIn, required: c.required });
          else errors.push(`${c.ticker}: ${r.error ?? 'not sent'}`);
        }),
      ),
    );
  }
  for (const ticker of [...new Set(configs.map((c) => c.ticker))].filter((t) => ASSETS[t].network !== 'ethereum')) {
    const mine = configs.filter((c) => c.ticker === ticker);
    let next = 0;
    const worker = async () => {
      while (next < mine.length) {
        const c = mine[next++];
        const amounts = Array.from({ length: c.deposits }, (_, k) => amount(ticker, next * 10 + k));
        try {
          for (const d of await chains.pay(ticker, c.addressIn, amounts)) paid.push({ ticker, txid: d.txid, vout: d.vout, addressIn: c.addressIn, required: c.required });
        } catch (e) {
          errors.push(`${ticker}: ${String(e).slice(0, 200)}`);
        }
      }
    };
    paying.push(...Array.from({ length: Math.min(limit, mine.length) }, worker));
  }
  await Promise.all(paying);
  return { paid, errors, firstAt, lastAt: Date.now() };
}

/**
 * --warmup N: before the measured burst, N deposits of each of its assets (other addresses) are paid and
 * followed to their confirmed callbacks, so that the burst meets workers that have run every step once, as a
 * running gateway's have: V8 compiles a worker's hot code (ethers, drizzle, the SDK's sandbox) on its first
 * deposits, and in a cold burst that compiling ran beside the deposits. Not counted in any figure.
 */
async function warmUp(bed: Bed, chains: DrillChains, configs: Config[]): Promise<void> {
  const before = bed.receiver.confirmed.size;
  const warm = await payBurst(bed, chains, configs);
  if (warm.errors.length) throw new Error(`warm-up payments failed: ${warm.errors.join(' | ')}`);
  const deadline = Date.now() + TIMEOUT_MS;
  while (bed.receiver.confirmed.size - before < warm.paid.length) {
    if (Date.now() > deadline) throw new Error(`warm-up: ${bed.receiver.confirmed.size - before}/${warm.paid.length} confirmed callbacks`);
    await new Promise((r) => setTimeout(r, 500));
  }
  // Their workflows complete after the callback; the burst starts on a quiet gateway.
  await new Promise((r) => setTimeout(r, 3000));
  log(`warm-up: ${warm.paid.length} deposits confirmed`);
}

async function main(): Promise<void> {
  const env: Record<string, string> = {};
  if (flags['watch-ms']) env.WATCH_INTERVAL_MS = flags['watch-ms'];
  // --head-feed off: the watchers poll only (no WebSocket or long-poll feed), for comparison.
  if (flags['head-feed'] === 'off') Object.assign(env, { ETHEREUM_WS_URL: '', SOLANA_WS_URL: '', LITECOIN_HEAD_FEED: '', BITCOIN_HEAD_FEED: '' });
  // --steps: each step's timing in the workers' logs (src/temporal/step-timings.ts), tabulated below.
  if (flags.steps) env.LOG_LEVEL = 'debug';
  log(`burst of ${TOTAL} deposits ${JSON.stringify(COUNTS)}, ${PER_ADDRESS} per address, Temporal: ${flags.temporal}; load average ${load()} on ${os.cpus().length} cores`);
  log(`DEPOSIT_POLL_INTERVAL ${process.env.DEPOSIT_POLL_INTERVAL ?? 'unset (production default, 5 minutes)'}; WATCH_INTERVAL_MS ${env.WATCH_INTERVAL_MS ?? 'unset (production default, 500)'}; head feed ${flags['head-feed']}; anvil ${flags['eth-block-s']} s blocks, surfnet ${flags['sol-slot-ms']} ms slots, litecoin mined every ${flags['ltc-block-ms']} ms by the bench`);
  if (flags.temporal !== 'server' && flags.temporal !== 'dev') throw new Error(`--temporal is server or dev, not ${flags.temporal}`);
  const stealer: Stealer | undefined = flags.steal ? startStealer(Number(flags.steal)) : undefined;
  if (stealer) log(`steal: ${stealer.describe}, all through the run`);
  // Stopped when this process exits, whatever the way (each also ends itself once this process is gone).
  process.on('exit', () => stealer?.stop());
  const ownWorker = flags['worker-of'] ? { networks: flags['worker-of'].split(','), nice: Number(flags['worker-of-nice']) } : undefined;
  const bed = await startBed({ solSlotTimeMs: Number(flags['sol-slot-ms']), ethBlockS: Number(flags['eth-block-s']), temporal: flags.temporal, env, log, counting: flags.costs, ownWorker });
  let mining = true;
  let miner: Promise<void> = Promise.resolve();
  let chains: DrillChains | undefined;
  try {
    chains = await drillChains(bed.devnets.state);
    const warmCounts = Object.fromEntries(Object.entries(COUNTS).map(([t, n]) => [t, Math.min(n, WARMUP)]).filter(([, n]) => Number(n) > 0));
    const warmConfigs = WARMUP > 0 ? await createConfigs(bed, chains, warmCounts, 'warm-') : [];
    const configs = await createConfigs(bed, chains, COUNTS);
    log(`${configs.length} configurations created through the API${warmConfigs.length ? `, and ${warmConfigs.length} for the warm-up` : ''}`);
    const c = chains;
    miner = (async () => {
      while (mining) {
        await c.mineLtc(1).catch(() => undefined);
        await new Promise((r) => setTimeout(r, Number(flags['ltc-block-ms'])));
      }
    })();
    if (warmConfigs.length) await warmUp(bed, chains, warmConfigs);
    const warmed = bed.receiver.confirmed.size;
    // --costs: the API settles after the creations, then the families one at a time (bench/pipeline/costs.ts).
    const meter = flags.costs ? startCostMeter(bed) : undefined;
    if (meter) await new Promise((r) => setTimeout(r, 10_000));
    const busyBefore = busyCoreS();
    const stolenBefore = stealer?.usedCoreS() ?? 0;
    const ch = chains;
    const tickers = Object.keys(COUNTS).filter((t) => configs.some((c) => c.ticker === t));
    const pay = (t: string) => payBurst(bed, ch, configs.filter((c) => c.ticker === t));
    const costRun = meter ? await familyBursts({ tickers, meter, log, timeoutMs: TIMEOUT_MS, pay, confirmed: () => bed.receiver.confirmed.size }) : undefined;
    const burst = costRun ?? (await payBurst(bed, chains, configs));
    log(`${burst.paid.length} deposits paid in ${((burst.lastAt - burst.firstAt) / 1000).toFixed(1)} s${burst.errors.length ? `; payments that failed: ${burst.errors.join(' | ')}` : ''}`);

    const want = new Set(burst.paid.map((p) => p.ticker));
    const deadline = Date.now() + TIMEOUT_MS;
    let lastReport = 0;
    while (bed.receiver.confirmed.size - warmed < burst.paid.length && Date.now() < deadline) {
      if (Date.now() - lastReport > 15_000) {
        lastReport = Date.now();
        const by: Record<string, number> = {};
        for (const a of bed.receiver.confirmed.values()) by[String(a.fields.coin)] = (by[String(a.fields.coin)] ?? 0) + 1;
        log(`confirmed callbacks ${bed.receiver.confirmed.size - warmed}/${burst.paid.length} ${JSON.stringify(by)}; load ${load()}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const busy = busyCoreS() - busyBefore;
    const stolen = (stealer?.usedCoreS() ?? 0) - stolenBefore;
    const done = bed.receiver.confirmed.size - warmed >= burst.paid.length;
    log(done ? 'every confirmed callback arrived' : `timed out after ${TIMEOUT_MS / 1000} s with ${bed.receiver.confirmed.size - warmed}/${burst.paid.length} confirmed callbacks`);
    const lastCallback = Math.max(...[...bed.receiver.confirmed.values()].map((a) => a.at));
    // The workflows finish once their confirmed callback is delivered; give them a moment before counting events.
    await new Promise((r) => setTimeout(r, 5000));
    const rows = await measureDeposits({
      state: bed.devnets.state, observer: bed.observer, databaseUrl: bed.databaseUrl, temporalAddress: bed.temporalAddress, deposits: burst.paid, confirmed: bed.receiver.confirmed,
    });
    const summaries = Object.keys(COUNTS).filter((t) => want.has(t)).map((t) => summarise(t, rows));
    const steps = phases(summaries.map((s) => s.ticker), rows);
    console.log('\n' + table(summaries) + '\n\n' + steps.table + '\n');
    const stepTimes = flags.steps ? stepTable(summaries.map((x) => x.ticker), new Map(burst.paid.map((p) => [p.txid, p.ticker])), readStepLines(bed.supervisor.logDir)) : undefined;
    if (stepTimes) console.log(stepTimes.table + '\n');
    for (const s of summaries) {
      const bad = Object.entries(s.results).filter(([k]) => k !== 'done');
      if (bad.length || s.complete < s.paid) console.log(`${s.ticker}: ${s.complete}/${s.paid} deposits fully measured; results ${JSON.stringify(s.results)}`);
    }
    const wall = (lastCallback - burst.firstAt) / 1000;
    console.log(`first payment → last confirmed callback: ${wall.toFixed(1)} s (${(((bed.receiver.confirmed.size - warmed) / wall) * 60).toFixed(1)} deposits/min)`);
    console.log(`machine CPU from the burst's start to its last confirmed callback (±0.5 s): ${busy.toFixed(1)} core-s on ${os.cpus().length} cores${stealer ? `, of which the stealers (--steal ${flags.steal}) ${stolen.toFixed(1)}` : ''}`);
    console.log(`receiver: ${JSON.stringify(bed.receiver.counts())}; observer late/failed polls: ${JSON.stringify(bed.observer.misses())}`);
    console.log(`gateway process deaths: ${bed.supervisor.deaths.length}; load average at the end ${load()}`);
    const windows = costRun?.windows;
    const costs = windows?.map((w) => familyCost(w.burst, w.idle, rows));
    if (costs && windows) console.log('\n' + costTable(costs, windows.map((w) => w.idle)) + '\n');
    meter?.stop();
    if (flags.json) {
      fs.writeFileSync(flags.json, JSON.stringify({ flags, counts: COUNTS, perAddress: PER_ADDRESS, loadAtEnd: os.loadavg(), wallS: wall, busyCoreS: busy, ...(stealer ? { stolenCoreS: stolen } : {}), summaries, steps: steps.data, deposits: rows, receiver: bed.receiver.counts(), deaths: bed.supervisor.deaths.length, ...(costs ? { costs, windows } : {}), ...(stepTimes ? { stepTimes: stepTimes.data } : {}) }, null, 2));
      console.log(`per-deposit figures in ${flags.json}`);
    }
    if (!done) process.exitCode = 1;
  } finally {
    mining = false;
    await miner;
    chains?.close();
    await bed.stop();
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
