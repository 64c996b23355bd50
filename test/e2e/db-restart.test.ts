import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Wallet } from 'ethers';
import { devnetPay } from '../../devnet/drive';
import { parseUnits } from '../../src/domain/money';
import { freePort } from '../../devnet/devserver';
import { findPgBin, startPgServer, type PgServer } from '../helpers/pg-server';
import { waitFor } from '../helpers/process';
import { balanceOf, startGateway, waitForCallback, type Gateway } from './harness';

/**
 * The API and worker processes ride out a PostgreSQL outage: while the server is away the API answers
 * the spec's 1501 body (health stays a liveness answer), nobody exits, and once it is back everything
 * recovers by itself; a deposit paid during the outage is forwarded once and confirmed.
 */
const root = path.resolve(__dirname, '../..');
let gw: Gateway;
let pg: PgServer;
const children: Array<ChildProcess & { out: () => string }> = [];

beforeAll(async () => {
  [gw, pg] = await Promise.all([startGateway({ worker: false }), startPgServer()]);
}, 240_000);
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await pg?.stop();
  await gw?.stop();
}, 60_000);

function spawnEntry(entry: 'api' | 'worker', extra: Record<string, string>) {
  const env = { ...process.env, ...gw.env, ...gw.devnets.env, DATABASE_URL: pg.url, TEMPORAL_ADDRESS: gw.temporal.address, DEPOSIT_POLL_INTERVAL: '1 second', LOG_LEVEL: 'info', ...extra };
  const child = spawn(process.execPath, ['--import', 'tsx', `src/entry/${entry}.ts`], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const c = Object.assign(child, { out: () => out });
  children.push(c);
  return c;
}

/** PostgreSQL's own fast shutdown of the test's private cluster; pg.restart() brings it back on the same port. */
function stopPostgres() {
  const pgCtl = findPgBin('pg_ctl')!;
  const args = ['-D', pg.dataDir, '-m', 'fast', '-w', 'stop'];
  if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', pgCtl, ...args], { stdio: 'ignore' });
  else execFileSync(pgCtl, args, { stdio: 'ignore' });
}

describe('a PostgreSQL outage', () => {
  it('is ridden out: 1501 while away, no process exits, recovery by itself, the deposit forwarded once', async () => {
    const port = await freePort('127.0.0.1');
    const api = spawnEntry('api', { PORT: String(port) });
    const worker = spawnEntry('worker', {});
    await waitFor(() => api.out().includes('API ready'), 60_000, 'API ready');
    await waitFor(() => worker.out().includes('worker ready'), 90_000, 'worker ready');
    const base = `http://127.0.0.1:${port}/api`;
    const out = Wallet.createRandom().address;
    const callback = `${gw.merchantUrl}/outage?order=1`;
    const created = await fetch(`${base}/eth/create`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callback_url: callback, address_out: out, post: 1, json: 1, confirmations: 2 }),
    });
    expect(created.status).toBe(200);
    const { address_in: addressIn } = (await created.json()) as { address_in: string };
    gw.orders.add(callback, 'eth', { address_in: addressIn });
    const logsUrl = `${base}/eth/logs?callback=${encodeURIComponent(callback)}`;

    stopPostgres();
    const down = Date.now();
    const away = await fetch(logsUrl);
    expect(away.status).toBe(500);
    expect(await away.json()).toMatchObject({ status: 'error', code: 1501, error: 'INTERNAL_GATEWAY_ERROR' });
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: 'ok' });
    const txid = await devnetPay(gw.devnets.state, 'eth', addressIn, '0.25');
    // The outage lasts 60 s: watchers, activities and requests all fail and retry meanwhile.
    await new Promise((r) => setTimeout(r, Math.max(0, 60_000 - (Date.now() - down))));
    expect(api.exitCode).toBeNull();
    expect(worker.exitCode).toBeNull();

    await pg.restart();
    const back = Date.now();
    await waitFor(async () => (await fetch(logsUrl)).status !== 500, 30_000, 'API answering from the database again');
    const recoveryMs = Date.now() - back;
    expect(recoveryMs).toBeLessThan(30_000);

    const confirmed = await waitForCallback(gw, (f) => f.txid_in === txid && f.result === 'sent', 150_000, 'confirmed callback');
    expect(api.exitCode).toBeNull();
    expect(worker.exitCode).toBeNull();
    // Counted on chain: one forward from address_in, the payout exactly what the callback reports.
    const forwarded = parseUnits(String(confirmed.fields!.value_forwarded_coin), 18);
    expect(await balanceOf(gw, 'eth', out)).toBe(forwarded);
    const { JsonRpcProvider, Network } = await import('ethers');
    const eth = gw.devnets.state.ethereum!;
    const p = new JsonRpcProvider(eth.rpcUrl, Network.from(BigInt(eth.chainId)), { staticNetwork: true, cacheTimeout: -1 });
    try {
      expect(await p.getTransactionCount(addressIn, 'latest')).toBe(1);
    } finally {
      p.destroy();
    }
  }, 300_000);
});
