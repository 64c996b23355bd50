/**
 * `npm start` killed with SIGKILL mid-deposit (its whole process group at once: the gateway, the Temporal
 * dev server, anvil, litecoind, as a power cut or `kill -9 -pgid` would) and started again on the same
 * data dir: the deposit recorded before the crash completes, forward and confirmed callback included.
 * PGlite, the dev server's SQLite and anvil's state dump (every second) carry it across. The restarted
 * gateway then serves every local chain, the UTXO nodes included: a btc and a bch deposit end to end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { JsonRpcProvider, Network, Wallet } from 'ethers';
import { devnetAddress, devnetMine, devnetPay, devnetUtxo } from '../../devnet/drive';
import { readDevnetState } from '../../devnet/index';
import { verifyCallback, type CallbackRequest } from '../../src/callbacks/verify';
import { ASSETS } from '../../src/domain/assets';
import { parseUnits } from '../../src/domain/money';
import { freePort } from '../../devnet/devserver';
import { descendants, isAlive, waitFor } from '../helpers/process';

jest.setTimeout(600_000);

const root = path.resolve(__dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-crash-'));
const started: ChildProcess[] = [];
const received: Array<Record<string, unknown>> = [];
/** Every callback request as sent, for signature checks. */
const requests: CallbackRequest[] = [];
let receiver: http.Server;
let port: number;
let uiPort: number;

function npmStart(): ChildProcess & { out: () => string } {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), TEMPORAL_UI_PORT: String(uiPort), CALLBACK_ALLOW_PRIVATE: 'true' };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  // Its own process group, so that one kill reaches the whole tree at once.
  const child = spawn(process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), 'src/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  started.push(child);
  return Object.assign(child, { out: () => out });
}

async function ready(child: ReturnType<typeof npmStart>) {
  await waitFor(() => child.out().includes('gateway ready') || child.exitCode !== null, 240_000, 'gateway ready');
  if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}: ${child.out().slice(-2000)}`);
}

/** The last block of anvil's state dump, or -1 while the file is missing or cut short. */
function dumpedBlock(): number {
  try {
    const state = JSON.parse(fs.readFileSync(path.join(dataDir, 'devnet', 'anvil-state.json'), 'utf8')) as { best_block_number?: number | string };
    return Number(state.best_block_number ?? -1);
  } catch {
    return -1;
  }
}

/** A failure of `wait` carries what the gateway printed meanwhile (its warnings and errors, the last of them). */
async function withOutput(child: ReturnType<typeof npmStart>, wait: () => Promise<void>): Promise<void> {
  try {
    await wait();
  } catch (e) {
    const lines = child.out().split('\n').filter((l) => l && !l.includes('"level":30')).slice(-60);
    const all = path.join(os.tmpdir(), `gw-crash-restart-${process.pid}.log`);
    fs.writeFileSync(all, started.map((c) => (c as ReturnType<typeof npmStart>).out()).join('\n=== restart ===\n'));
    (e as Error).message += `\nnpm start printed (warnings and errors, last 60 lines; every line of both runs in ${all}):\n${lines.join('\n')}`;
    throw e;
  }
}

const api = (p: string) => `http://127.0.0.1:${port}/api${p}`;
async function logs(callback: string, ticker = 'eth') {
  const r = await fetch(api(`/${ticker}/logs?callback=${encodeURIComponent(callback)}`));
  return (await r.json()) as { callbacks?: Array<Record<string, unknown>> };
}

beforeAll(async () => {
  port = await freePort('127.0.0.1');
  uiPort = await freePort('127.0.0.1');
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (body) received.push(JSON.parse(body) as Record<string, unknown>);
      requests.push({ method: req.method!, url: req.url!, headers: req.headers as Record<string, string>, rawBody: body });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
});

afterAll(async () => {
  for (const c of started) {
    if (c.pid && c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((r) => c.once('exit', r));
      process.kill(-c.pid, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 15_000)))]);
      clearTimeout(timer);
      try {
        process.kill(-c.pid, 'SIGKILL');
      } catch {
        // the group is gone
      }
    }
  }
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a deposit recorded before SIGKILL of the whole tree is forwarded and called back after the restart', async () => {
  const first = npmStart();
  await ready(first);
  const callback = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb?order=crash-1`;
  const addressOut = Wallet.createRandom().address;
  const created = await fetch(api('/eth/create'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ callback_url: callback, address_out: addressOut, confirmations: 6, post: 1, json: 1 }),
  });
  expect(created.status).toBe(200);
  const config = (await created.json()) as { address_in: string };
  const txid = await devnetPay(readDevnetState(path.join(dataDir, 'devnet')), 'eth', config.address_in, '0.5');
  const depositBlocks = new Map<string, number>();
  const depositBlock = (hash: string) => depositBlocks.get(hash) ?? Infinity;
  await waitFor(async () => {
    const eth = readDevnetState(path.join(dataDir, 'devnet')).ethereum!;
    const provider = new JsonRpcProvider(eth.rpcUrl, Network.from(BigInt(eth.chainId)), { staticNetwork: true, cacheTimeout: -1 });
    try {
      const receipt = await provider.getTransactionReceipt(txid);
      if (receipt) depositBlocks.set(txid, receipt.blockNumber);
      return receipt !== null;
    } finally {
      provider.destroy();
    }
  }, 30_000, 'the deposit to be mined');
  // Recorded (the watcher saw it, its workflow started), far from its 6 confirmations: then the crash.
  await waitFor(async () => (await logs(callback)).callbacks?.[0]?.txid_in === txid, 60_000, 'the deposit to be recorded');
  const before = (await logs(callback)).callbacks![0];
  expect(before.result).toBe('pending');
  // anvil dumps its state every second: the crash comes once a dump holds the deposit's block, as a power cut
  // a second later would (a chain cut back before the payment has no deposit left to forward).
  await waitFor(() => dumpedBlock() >= depositBlock(txid), 30_000, "anvil's state dump to hold the deposit's block");

  const tree = [first.pid!, ...descendants(first.pid!)];
  process.kill(-first.pid!, 'SIGKILL');
  await waitFor(() => tree.every((p) => !isAlive(p)), 10_000, 'every process of npm start to be gone');
  expect(received).toEqual([]);

  const second = npmStart();
  await ready(second);
  expect(second.out()).not.toContain('local ethereum chain is new');
  await withOutput(second, () => waitFor(() => received.some((f) => f.txid_in === txid && f.result === 'sent'), 240_000, 'the confirmed callback after the restart'));
  const sent = received.find((f) => f.txid_in === txid && f.result === 'sent')!;
  expect(sent.uuid).toBe(before.uuid);
  const eth = readDevnetState(path.join(dataDir, 'devnet')).ethereum!;
  const provider = new JsonRpcProvider(eth.rpcUrl, Network.from(BigInt(eth.chainId)), { staticNetwork: true, cacheTimeout: -1 });
  try {
    const forwarded = parseUnits(String(sent.value_forwarded_coin), 18);
    expect(forwarded).toBeGreaterThan(0n);
    await waitFor(async () => (await provider.getBalance(addressOut)) > 0n, 60_000, 'the forward to land');
    expect(await provider.getBalance(addressOut)).toBe(forwarded);
  } finally {
    provider.destroy();
  }
  await waitFor(async () => (await logs(callback)).callbacks?.[0]?.result === 'done', 60_000, 'logs done');
});

test('the restarted npm start lists every local chain and takes a btc and a bch deposit end to end, signed callback verified', async () => {
  const catalog = (await (await fetch(api('/cryptocurrencies'))).json()) as Record<string, unknown>;
  // npm test installs the local nodes first (scripts/test-prerequisites.js), so all of them run here.
  expect(Object.keys(catalog)).toEqual(expect.arrayContaining(['eth', 'erc20_usdt', 'sol', 'sol_usdc', 'ltc', 'btc', 'bch']));
  const publicKey = await (await fetch(api('/pubkey'))).text();
  const state = readDevnetState(path.join(dataDir, 'devnet'));
  for (const ticker of ['btc', 'bch']) {
    const callback = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb?order=${ticker}`;
    const addressOut = await devnetAddress(state, ticker);
    const created = await fetch(api(`/${ticker}/create`), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callback_url: callback, address_out: addressOut, confirmations: 1, post: 1, json: 1 }),
    });
    expect(created.status).toBe(200);
    const { address_in } = (await created.json()) as { address_in: string };
    const txid = await devnetPay(state, ticker, address_in, '0.5');
    const node = devnetUtxo(state, ASSETS[ticker].network);
    const paidAt = await node.height();
    await devnetMine(state, ticker, 1);
    // The forward needs a block too; the local UTXO chains mine one every 10 s.
    try {
      await waitFor(() => received.some((f) => f.txid_in === txid && f.result === 'sent'), 180_000, `the ${ticker} confirmed callback`);
    } catch (e) {
      // What a rare failure needs to be read from CI's output alone: where the chain and the payment stood.
      const height = await node.height().catch((err: Error) => err.message);
      const entries = await logs(callback, ticker).catch((err: Error) => err.message);
      const warnings = started.at(-1) ? (started.at(-1) as ReturnType<typeof npmStart>).out().split('\n').filter((l) => !l.includes('"level":30')).slice(-40) : [];
      const nodeLog = path.join(dataDir, 'devnet', `${state[ASSETS[ticker].network as 'bitcoin' | 'bitcoincash']?.node}.log`);
      const tail = fs.existsSync(nodeLog) ? fs.readFileSync(nodeLog, 'utf8').split('\n').slice(-30) : [];
      console.log(JSON.stringify({ ticker, txid, paidAt, height, entries, received, warnings, nodeLogTail: tail }, null, 2));
      throw e;
    }
    const i = received.findIndex((f) => f.txid_in === txid && f.result === 'sent');
    expect(verifyCallback(requests[i], publicKey).ok).toBe(true);
    const sent = received[i];
    expect(sent).toMatchObject({ coin: ticker, value_coin: '0.50000000', address_out: addressOut });
    const forwarded = parseUnits(String(sent.value_forwarded_coin), ASSETS[ticker].decimals);
    expect(forwarded).toBeGreaterThan(0n);
    await waitFor(async () => (await node.balance(addressOut)) === forwarded, 60_000, `the ${ticker} forward to land`);
    await waitFor(async () => (await logs(callback, ticker)).callbacks?.[0]?.result === 'done', 60_000, `${ticker} logs done`);
  }
});
