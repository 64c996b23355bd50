/**
 * The local chains of `npm start` survive a crash of its process tree: the process that runs them (here
 * `npm run devnet -- up`, the same startDevnets as `npm start`) is SIGKILLed right after payments; its
 * child nodes die with it (parent-death signal), and the restart on the same data dir has the payments
 * (anvil dumps its state every second, litecoind keeps its datadir). surfnet keeps no state: the restart
 * says that the Solana chain is new. What the gateway then does with the new chain is tested in
 * devnet-reset.test.ts; a worker SIGKILLed mid-lifecycle resuming a payment is test/e2e/processes.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Contract, JsonRpcProvider, Network, Wallet } from 'ethers';
import { devnetMine, devnetPay } from '../../devnet/drive';
import { readDevnetState } from '../../devnet/index';
import { ERC20 } from '../../src/chains/evm/erc20';
import { BitcoinRpc } from '../../src/chains/utxo/rpc';
import { descendants, isAlive, killAndWait, waitFor } from '../helpers/process';
import { tmpDir } from '../helpers/nodes';

jest.setTimeout(300_000);

const root = path.resolve(__dirname, '../..');
const dir = tmpDir('gw-devnet-crash-');
const started: ChildProcess[] = [];

function up(): ChildProcess & { out: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'scripts/devnet.ts'), 'up', '--dir', dir], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  started.push(child);
  return Object.assign(child, { out: () => out });
}

async function ready(child: ReturnType<typeof up>): Promise<void> {
  await waitFor(() => child.out().includes('Ctrl-C stops the chains') || child.exitCode !== null, 180_000, 'the devnet to start');
  if (child.exitCode !== null) throw new Error(`devnet exited ${child.exitCode}: ${child.out()}`);
}

afterAll(async () => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 3000));
  await killAndWait(started);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('SIGKILL of the devnet process: no node outlives it, and the restart has every payment made before it', async () => {
  const first = up();
  await ready(first);
  expect(first.out()).not.toContain('chain is new');
  const state = readDevnetState(dir);
  const to = Wallet.createRandom().address;
  const ethTx = await devnetPay(state, 'eth', to, '0.75');
  const tokenTx = await devnetPay(state, 'erc20_usdt', to, '42');
  const ltcTo = await new BitcoinRpc(state.litecoin!.walletUrl).call<string>('getnewaddress', ['', 'bech32']);
  const ltcTx = await devnetPay(state, 'ltc', ltcTo, '0.3');
  await devnetMine(state, 'ltc', 1);
  const ltcBlock = (await new BitcoinRpc(state.litecoin!.rpcUrl).call<{ blockhash?: string }>('getrawtransaction', [ltcTx, true])).blockhash;
  expect(ltcBlock).toMatch(/^[0-9a-f]{64}$/);
  const eth = new JsonRpcProvider(state.ethereum!.rpcUrl, Network.from(31337n), { staticNetwork: true, cacheTimeout: -1 });
  const receipt = (await eth.getTransactionReceipt(ethTx))!;
  eth.destroy();
  // anvil dumps every second: let one dump pass, as a crash at any later moment would.
  await new Promise((r) => setTimeout(r, 2500));

  const nodes = descendants(first.pid!);
  expect(nodes.length).toBeGreaterThanOrEqual(2); // anvil and litecoind
  const exited = new Promise((r) => first.once('exit', r));
  process.kill(first.pid!, 'SIGKILL');
  await exited;
  await waitFor(() => nodes.every((p) => !isAlive(p)), 10_000, 'the chain nodes to die with their parent');

  const second = up();
  await ready(second);
  expect(second.out()).toContain('local solana chain is new');
  expect(second.out()).not.toContain('local ethereum chain is new');
  const after = readDevnetState(dir);
  expect(after.ethereum!.tokens).toEqual(state.ethereum!.tokens);
  const eth2 = new JsonRpcProvider(after.ethereum!.rpcUrl, Network.from(31337n), { staticNetwork: true, cacheTimeout: -1 });
  try {
    const again = (await eth2.getTransactionReceipt(ethTx))!;
    expect([again.blockNumber, again.blockHash]).toEqual([receipt.blockNumber, receipt.blockHash]);
    expect(await eth2.getBalance(to)).toBe(750_000_000_000_000_000n);
    expect((await eth2.getTransactionReceipt(tokenTx))?.status).toBe(1);
    expect(await new Contract(after.ethereum!.tokens.erc20_usdt, ERC20, eth2).getFunction('balanceOf')(to)).toBe(42_000_000n);
  } finally {
    eth2.destroy();
  }
  // In the very block it was mined in before the crash, not mined again from the wallet afterwards.
  const ltc = await new BitcoinRpc(after.litecoin!.rpcUrl).call<{ blockhash?: string; confirmations?: number }>('getrawtransaction', [ltcTx, true]);
  expect(ltc.blockhash).toBe(ltcBlock);
  expect(ltc.confirmations).toBeGreaterThanOrEqual(1);

  second.kill('SIGTERM');
  await waitFor(() => second.exitCode !== null || second.signalCode !== null, 30_000, 'the devnet to stop');
});
