import { Client, Connection, type ScheduleExecutionResult } from '@temporalio/client';
import { Wallet } from 'ethers';
import { sql } from 'drizzle-orm';
import { ASSET_STATE_TTL_MS } from '../../api/asset-cache';
import { runAdmin } from '../../scripts/admin';
import { devnetPay } from '../../devnet/drive';
import { jsonRpc } from '../../src/chains/json-rpc';
import { forwardFeeEstimate } from '../../src/chains/utxo/forward';
import { BitcoinRpc, toSats } from '../../src/chains/utxo/rpc';
import { minimumForCost, publishedMinimum } from '../../src/domain/minimum';
import { STANDARD_TIERS } from '../../src/domain/standard-tiers';
import { formatUnits, parseUnits } from '../../src/domain/money';
import { ensureMinimumSchedule, MINIMUM_SCHEDULE_ID } from '../../src/temporal/minimum-schedule';
import { minimumFor, type RefreshReport } from '../../activities/minimums';
import type { ConfigRow } from '../../src/db/queries/payments';
import { ASSETS } from '../../src/domain/assets';
import { waitFor, withEnv } from '../helpers/process';
import { balanceOf, catalogOf, createConfig, infoMinimumOf, logsOf, startGateway, SwitchablePrices, waitForCallback, type Gateway } from './harness';

/**
 * SPEC 2.1, 2.2, 8 on real parts: the worker's `minimum-refresh` Temporal Schedule on the Temporal dev
 * server recomputes each served asset's minimum from anvil's, litecoind's and surfnet's live fees and the
 * price; the catalog prints null while a figure cannot be computed; deposits are held to the current figure.
 */
const REFRESH_MS = 2000;
const prices = new SwitchablePrices();
let gw: Gateway;
/** An eth configuration created while the minimum was still the floor: its snapshot is the floor. */
let early: Record<string, string>;
const earlyCb = () => `${gw.merchantUrl}/min?order=early`;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  gw = await startGateway({ prices, env: { MINIMUM_REFRESH_MS: String(REFRESH_MS) } });
  connection = await Connection.connect({ address: gw.temporal.address });
  client = new Client({ connection });
}, 240_000);
afterAll(async () => {
  await connection?.close();
  await gw?.stop();
}, 60_000);

const catalog = () => catalogOf(gw);
/**
 * The catalog's figure of `ticker` once it is current: on a loaded machine a figure can pass its 3 intervals
 * (null) before the next run writes it again.
 */
async function currentMinimum(ticker: string): Promise<string> {
  let m: string | null | undefined;
  await waitFor(async () => typeof (m = (await catalog())[ticker]?.minimum) === 'string', 5 * REFRESH_MS + 20_000, `a current ${ticker} minimum`);
  return m!;
}
const infoMinimum = (ticker: string) => infoMinimumOf(gw, ticker);
async function rows<T>(query: ReturnType<typeof sql>): Promise<T[]> {
  return ((await gw.database.db.execute(query)) as unknown as { rows: T[] }).rows;
}

/**
 * The result of the first scheduled run that started after `after`: its figures come from the network as
 * it was then (a run already under way at `after` may have read the fees before).
 */
async function runStartedAfter(after: Date): Promise<{ report: RefreshReport; delayMs: number }> {
  const handle = client.schedule.getHandle(MINIMUM_SCHEDULE_ID);
  let action: ScheduleExecutionResult | undefined;
  await waitFor(
    async () => {
      action = (await handle.describe()).info.recentActions.find((a) => a.takenAt.getTime() > after.getTime());
      return action !== undefined;
    },
    5 * REFRESH_MS + 20_000,
    `a minimum-refresh run after ${after.toISOString()}`,
  );
  const { workflowId, firstExecutionRunId } = action!.action.workflow;
  const report = (await client.workflow.getHandle(workflowId, firstExecutionRunId).result()) as RefreshReport;
  // The API serves asset state up to ASSET_STATE_TTL_MS old (api/asset-cache.ts): what it says after that is this run's.
  await new Promise((r) => setTimeout(r, ASSET_STATE_TTL_MS + 100));
  return { report, delayMs: action!.takenAt.getTime() - after.getTime() };
}

const mineEth = (n = 1) => jsonRpc(gw.devnets.state.ethereum!.rpcUrl, 'anvil_mine', [`0x${n.toString(16)}`]);

describe('the minimum-refresh schedule', () => {
  it('exists on the Temporal dev server, created by the worker, and its runs write every served asset\'s figure', async () => {
    const handle = client.schedule.getHandle(MINIMUM_SCHEDULE_ID);
    const d = await handle.describe();
    expect(d.action).toMatchObject({ type: 'startWorkflow', workflowType: 'minimumRefresh', taskQueue: gw.cfg.taskQueue });
    expect(d.spec.intervals).toEqual([expect.objectContaining({ every: REFRESH_MS })]);
    expect(d.state.paused).toBe(false);

    const { report } = await runStartedAfter(new Date());
    expect(Object.keys(report.computed).sort()).toEqual(['erc20_usdt', 'eth', 'ltc', 'sol', 'sol_usdc']);
    expect(report.unavailable).toEqual({});
    const written = await rows<{ ticker: string; value_base: string }>(sql`SELECT ticker, value_base::text AS value_base FROM asset_minimums WHERE value_base IS NOT NULL`);
    expect(written.map((r) => r.ticker).sort()).toEqual(['erc20_usdt', 'eth', 'ltc', 'sol', 'sol_usdc']);
    const c = await catalog();
    for (const t of ['eth', 'erc20_usdt', 'ltc', 'sol', 'sol_usdc']) expect(c[t].minimum).toMatch(/^\d+\.\d+$/);
    // Quiet local chains cost little: the floor, except the SPL token, whose fee payer may create the
    // merchant's token account (rent ≈ 0.00204 SOL ≈ 0.31 USDC at 150, so 5 % of about 6.1 USDC).
    expect(c.ltc.minimum).toBe('0.00100000');
    expect(c.sol.minimum).toBe('0.010000000');
    expect(Number(c.sol_usdc.minimum)).toBeGreaterThan(5);
    // Each run is a workflow of its own, visible with its result in the UI.
    expect((await handle.describe()).info.recentActions.length).toBeGreaterThan(0);
  }, 120_000);

  it('is created idempotently: a second worker start keeps it (and refreshes at once), a new interval updates it, a pause survives', async () => {
    const handle = client.schedule.getHandle(MINIMUM_SCHEDULE_ID);
    await ensureMinimumSchedule(client, { taskQueue: gw.cfg.taskQueue, everyMs: REFRESH_MS });
    await handle.pause('operator check');
    await ensureMinimumSchedule(client, { taskQueue: gw.cfg.taskQueue, everyMs: 3 * REFRESH_MS });
    let d = await handle.describe();
    expect(d.spec.intervals).toEqual([expect.objectContaining({ every: 3 * REFRESH_MS })]);
    expect(d.state.paused).toBe(true);
    await handle.unpause();
    // A worker starting with an hourly interval: no tick is due, yet a refresh runs at once.
    const restarted = new Date();
    await ensureMinimumSchedule(client, { taskQueue: gw.cfg.taskQueue, everyMs: 3_600_000 });
    const { delayMs } = await runStartedAfter(restarted);
    expect(delayMs).toBeLessThan(10_000);
    await ensureMinimumSchedule(client, { taskQueue: gw.cfg.taskQueue, everyMs: REFRESH_MS });
    d = await handle.describe();
    expect(d.spec.intervals).toEqual([expect.objectContaining({ every: REFRESH_MS })]);
    expect(d.state.paused).toBe(false);
    const ids: string[] = [];
    for await (const s of client.schedule.list()) ids.push(s.scheduleId);
    expect(ids).toEqual([MINIMUM_SCHEDULE_ID]);
  }, 60_000);
});

describe('minimums follow the network', () => {
  it('anvil base fee at 2000 gwei raises the eth and erc20_usdt minimums with the next refresh', async () => {
    const eth = gw.devnets.state.ethereum!;
    // Blocks only on request from here on (each transaction still mines at once), so the base fee stays put.
    await jsonRpc(eth.rpcUrl, 'evm_setIntervalMining', [0]);
    await jsonRpc(eth.rpcUrl, 'evm_setAutomine', [true]);
    const before = await catalog();
    expect(before.eth.minimum).toBe('0.001000000000000000');
    early = await createConfig(gw, 'eth', { callback_url: earlyCb(), address_out: Wallet.createRandom().address, pending: 1, post: 1, json: 1 });
    expect(early.minimum_transaction_coin).toBe('0.001000000000000000');

    await jsonRpc(eth.rpcUrl, 'anvil_setNextBlockBaseFeePerGas', [`0x${(2000n * 10n ** 9n).toString(16)}`]);
    await mineEth();
    // The first run after the change has it: a scheduled run, with no restart or manual trigger. (How soon it
    // starts is the schedule's interval, plus whatever a loaded machine adds: not a timing assertion here.)
    const { report } = await runStartedAfter(new Date());
    const after = await catalog();
    expect(after.eth.minimum).toBe(report.computed.eth);
    // Pending base fee 1750 gwei: maxFee ≥ 3500 gwei; 21 000 gas → ≥ 0.0735 ETH; ÷ 5 % → ≥ 1.47 ETH.
    expect(parseUnits(after.eth.minimum!, 18)).toBeGreaterThanOrEqual(parseUnits('1.47', 18));
    // Top-up for 121 000 gas at ≥ 3500 gwei ≈ 0.4235 ETH × 3000 USDT/ETH ÷ 5 % → ≥ 25 410 USDT.
    expect(parseUnits(after.erc20_usdt.minimum!, 6)).toBeGreaterThanOrEqual(parseUnits('25410', 6));
    expect(parseUnits(after.erc20_usdt.minimum!, 6)).toBeGreaterThan(parseUnits(before.erc20_usdt.minimum!, 6));
    expect(await infoMinimum('eth')).toBe(after.eth.minimum);
    // The configuration's snapshot does not move (SPEC 2.3); a new configuration takes the current figure.
    const reused = await createConfig(gw, 'eth', { callback_url: earlyCb(), address_out: early.address_out });
    expect(reused.minimum_transaction_coin).toBe('0.001000000000000000');
  }, 120_000);

  it('litecoind: once estimatesmartfee has data (200 sat/vB), the ltc minimum moves from the floor to 5 % of that forward', async () => {
    const ltc = gw.devnets.state.litecoin!;
    const node = new BitcoinRpc(ltc.rpcUrl);
    const wallet = new BitcoinRpc(ltc.walletUrl);
    expect((await catalog()).ltc.minimum).toBe('0.00100000'); // fallback 20 sat/vB, two outputs: 2 840 sat ÷ 5 % < floor
    // Fee estimation counts only transactions with confirmed inputs that were seen in the mempool: split a
    // coin into many outputs, then a few blocks of transactions paying 200 sat/vB.
    const outputs: Record<string, number> = {};
    for (let i = 0; i < 40; i++) outputs[await wallet.call<string>('getnewaddress', ['', 'bech32'])] = 0.5;
    await wallet.call('sendmany', ['', outputs]);
    await node.call('generatetoaddress', [1, ltc.minerAddress]);
    let estimate: { feerate?: number | string } = {};
    for (let round = 0; round < 30 && !estimate.feerate; round++) {
      for (let k = 0; k < 3; k++) {
        const to = await wallet.call<string>('getnewaddress', ['', 'bech32']);
        await wallet.call('sendtoaddress', [to, 0.01, '', '', false, true, null, 'unset', false, 200]);
      }
      await node.call('generatetoaddress', [1, ltc.minerAddress]);
      estimate = await node.call<{ feerate?: number }>('estimatesmartfee', [6]);
    }
    expect(estimate.feerate).toBeDefined();
    const rate = (toSats(String(estimate.feerate)) + 999n) / 1000n;
    expect(rate).toBeGreaterThanOrEqual(150n);
    // The forward's two outputs (payout and commission); litecoind's dust for a P2PKH address_out (5460 lit)
    // under every fee percentage does not decide here.
    const expected = publishedMinimum({
      networkFee: forwardFeeEstimate('ltc', true, rate, 2), payoutFloor: 5460n, feePercents: ['1.00', ...STANDARD_TIERS.map((t) => t.feePercent)],
      maxCostPercent: gw.cfg.minimumMaxCostPercent, floor: parseUnits('0.001', 8),
    });
    expect(expected).toBe(minimumForCost(forwardFeeEstimate('ltc', true, rate, 2), gw.cfg.minimumMaxCostPercent, parseUnits('0.001', 8)));

    const { report } = await runStartedAfter(new Date());
    expect(report.computed.ltc).toBe(formatUnits(expected, 8));
    expect((await catalog()).ltc.minimum).toBe(formatUnits(expected, 8));
    expect(expected).toBeGreaterThan(parseUnits('0.001', 8));
  }, 180_000);

  it('no price for a token\'s network cost: its catalog minimum is null (still listed), then a figure again', async () => {
    prices.available = false;
    try {
      const { report } = await runStartedAfter(new Date());
      expect(report.unavailable).toEqual({
        erc20_usdt: 'no price to convert the Ethereum network cost into USDT',
        sol_usdc: 'no price to convert the Solana network cost into USDC',
      });
      const c = await catalog();
      expect(c.erc20_usdt).toMatchObject({ ticker: 'erc20_usdt', minimum: null });
      expect(c.sol_usdc).toMatchObject({ ticker: 'sol_usdc', minimum: null });
      // Native coins need no price: unaffected.
      expect(report.computed.eth).toMatch(/^\d+\.\d{18}$/);
      expect(await currentMinimum('eth')).toMatch(/^\d+\.\d{18}$/);
      // info must print a decimal string: the last figure.
      const last = (await rows<{ v: string }>(sql`SELECT value_base::text AS v FROM asset_minimums WHERE ticker = 'erc20_usdt'`))[0].v;
      expect(await infoMinimum('erc20_usdt')).toBe(formatUnits(BigInt(last), 6));
    } finally {
      prices.available = true;
    }
    const { report } = await runStartedAfter(new Date());
    expect(Object.keys(report.unavailable)).toEqual([]);
    const c = await catalog();
    expect(c.erc20_usdt.minimum).toMatch(/^\d+\.\d{6}$/);
    expect(c.sol_usdc.minimum).toMatch(/^\d+\.\d{6}$/);
  }, 120_000);
});

describe('deposits are held to the refreshed minimum', () => {
  it('below it: failed with its reason and no callback; above it: forwarded and confirmed', async () => {
    const minimum = parseUnits(await currentMinimum('eth'), 18);
    expect(minimum).toBeGreaterThan(parseUnits('1', 18)); // the 2000 gwei base fee is still in force (decaying per block)
    const below = formatUnits(minimum / 4n, 18).replace(/0+$/, '');
    const above = formatUnits(minimum * 3n, 18).replace(/0+$/, '');

    const smallCb = `${gw.merchantUrl}/min?order=small`;
    const small = await createConfig(gw, 'eth', { callback_url: smallCb, address_out: Wallet.createRandom().address, pending: 1, post: 1, json: 1, confirmations: 2 });
    expect(parseUnits(small.minimum_transaction_coin, 18)).toBeGreaterThan(parseUnits('1', 18));
    // The floor the raise replaced stays honoured for one refresh interval (a customer may have just read it).
    await waitFor(async () => ((await minimumFor(gw.database.db, {} as ConfigRow, ASSETS.eth)) ?? 0n) > parseUnits(below, 18), 30_000, 'the replaced floor no longer honoured');
    const smallTx = await devnetPay(gw.devnets.state, 'eth', small.address_in, below);
    await waitFor(async () => (await logsOf(gw, 'eth', smallCb)).body.callbacks?.[0]?.result === 'failed', 60_000, 'below-minimum deposit failed');
    const [failed] = await rows<{ reason: string }>(sql`SELECT reason FROM payments WHERE txid_in = ${smallTx}`);
    expect(failed.reason).toMatch(/below the minimum/);
    // Held to the figure current when evaluated, not to the floor snapshot of a configuration made earlier.
    const earlyTx = await devnetPay(gw.devnets.state, 'eth', early.address_in, below);
    await waitFor(async () => (await logsOf(gw, 'eth', earlyCb())).body.callbacks?.[0]?.result === 'failed', 60_000, 'deposit above the snapshot, below the current minimum, failed');
    expect((await rows<{ reason: string }>(sql`SELECT reason FROM payments WHERE txid_in = ${earlyTx}`))[0].reason).toMatch(/below the minimum/);

    const bigCb = `${gw.merchantUrl}/min?order=big`;
    const addressOut = Wallet.createRandom().address;
    const big = await createConfig(gw, 'eth', { callback_url: bigCb, address_out: addressOut, pending: 1, post: 1, json: 1, confirmations: 2 });
    const bigTx = await devnetPay(gw.devnets.state, 'eth', big.address_in, above);
    // Blocks come only on request now: mine while the deposit confirms and its forward lands.
    let mining = true;
    const miner = (async () => {
      while (mining) {
        await mineEth();
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    try {
      const sent = await waitForCallback(gw, (f) => f.txid_in === bigTx && f.result === 'sent', 120_000, 'above-minimum confirmed');
      expect(sent.fields).toMatchObject({ coin: 'eth', value_coin: formatUnits(minimum * 3n, 18) });
      expect(await balanceOf(gw, 'eth', addressOut)).toBe(parseUnits(String(sent.fields!.value_forwarded_coin), 18));
    } finally {
      mining = false;
      await miner;
    }
    expect(gw.merchant.received.filter((r) => r.fields?.txid_in === smallTx || r.fields?.txid_in === earlyTx)).toHaveLength(0);
    expect((await logsOf(gw, 'eth', smallCb)).body.callbacks[0]).toMatchObject({ txid_in: smallTx, result: 'failed', txid_out: null, logs: [] });
  }, 240_000);
});

describe('the operator pins a minimum', () => {
  const withAdminEnv = <T>(fn: () => Promise<T>) => withEnv({ TEMPORAL_ADDRESS: gw.temporal.address, TEMPORAL_TASK_QUEUE: gw.cfg.taskQueue }, fn);

  it('refuses a bad pin before sending anything', async () => {
    const out: string[] = [];
    await withAdminEnv(async () => {
      expect(await runAdmin(['minimum', 'set', 'ltc', '0.0001'], (l) => out.push(l))).toBe(2);
      expect(await runAdmin(['minimum', 'set', 'xrp', '1'], (l) => out.push(l))).toBe(2);
      expect(await runAdmin(['minimum', 'set', 'ltc', '0.000000001'], (l) => out.push(l))).toBe(2);
      expect(await runAdmin(['minimum', 'set', 'ltc'], (l) => out.push(l))).toBe(2);
    });
    expect(out[0]).toMatch(/below the registry floor 0\.00100000/);
    expect(out[1]).toMatch(/unknown ticker/);
    expect(out[2]).toMatch(/decimal places/);
    expect(out[3]).toMatch(/^usage:/);
  });

  it('`minimum set` shows in the catalog and never goes stale; `minimum clear` returns to the schedule\'s figure', async () => {
    const out: string[] = [];
    expect(await withAdminEnv(() => runAdmin(['minimum', 'set', 'ltc', '0.5'], (l) => out.push(l)))).toBe(0);
    expect(out).toEqual(['ltc: minimum pinned at 0.50000000']);
    // The API reads asset state at most once a second (api/asset-cache.ts): the pin shows within that.
    await waitFor(async () => (await catalog()).ltc.minimum === '0.50000000', 5_000, 'the pin in the catalog');
    expect(await infoMinimum('ltc')).toBe('0.50000000');

    // With the schedule paused, computed figures go stale (null) after three intervals; the pin does not.
    const handle = client.schedule.getHandle(MINIMUM_SCHEDULE_ID);
    await handle.pause('pin test');
    try {
      await waitFor(async () => (await catalog()).eth.minimum === null, 3 * REFRESH_MS + 30_000, 'eth minimum stale');
      const c = await catalog();
      expect(c.ltc.minimum).toBe('0.50000000');
      expect(c.eth).toMatchObject({ ticker: 'eth', minimum: null });
    } finally {
      await handle.unpause();
    }

    expect(await withAdminEnv(() => runAdmin(['minimum', 'clear', 'ltc'], (l) => out.push(l)))).toBe(0);
    expect(out[1]).toMatch(/^ltc: pin cleared/);
    await runStartedAfter(new Date());
    await waitFor(async () => (await catalog()).ltc.minimum !== '0.50000000', 5_000, 'the pin cleared in the catalog');
    const c = await catalog();
    expect(c.ltc.minimum).toMatch(/^\d+\.\d{8}$/);
    expect(c.eth.minimum).toMatch(/^\d+\.\d{18}$/);
  }, 120_000);
});
