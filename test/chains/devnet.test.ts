/**
 * startDevnets (what the embedded `npm start` runs) and the devnet CLI against it: the env it returns
 * configures every adapter through chainConfigFromEnv, `pay` prints a txid the chain knows, `mine`
 * moves the chain, and stop() ends every child by PID.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { jsonRpc } from '../../src/chains/json-rpc';
import { chainConfigFromEnv } from '../../src/chains/config';
import { openHeadFeed } from '../../src/detection/heads';
import { startDevnets, type Devnets } from '../../devnet/index';
import { litecoindAvailable } from '../../devnet/litecoind';
import { BitcoinRpc } from '../../src/chains/utxo/rpc';
import { createAdapter } from '../../src/chains/factory';
import type { ChainAdapter } from '../../src/chains/adapter';
import { sponsorAddresses } from '../../src/chains/sponsor';
import { isAlive, waitFor } from '../helpers/process';
import { testSeed, tmpDir } from '../helpers/nodes';

jest.setTimeout(180_000);

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');
const cli = (dir: string, ...args: string[]) =>
  run(process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), path.join(root, 'scripts/devnet.ts'), ...args, '--dir', dir], {
    cwd: root,
    timeout: 90_000,
  }).then((r) => r.stdout.trim());

const seed = testSeed();
const dir = tmpDir('gw-devnet-');
let nets: Devnets;
const adapters: Record<string, ChainAdapter> = {};

beforeAll(async () => {
  nets = await startDevnets(dir, { seed, ethBlockTime: 1, ltcBlockIntervalMs: 0, solSlotTimeMs: 100 });
  const config = chainConfigFromEnv(nets.env);
  for (const [network, runtime] of Object.entries(config)) adapters[network] = await createAdapter(network, runtime, seed);
});

afterAll(async () => {
  for (const a of Object.values(adapters)) await a.close();
  await nets?.stop();
  for (const pid of nets?.pids ?? []) expect(isAlive(pid)).toBe(false);
});

test('the env configures every started chain, token contracts included', async () => {
  const config = chainConfigFromEnv(nets.env);
  expect(litecoindAvailable()).toBe(true); // .ci/run installs it; the UTXO devnet is not optional in tests
  // The local Bitcoin and Bitcoin Cash nodes too: `npm run devnet -- install` (test prerequisites, .ci/run).
  expect(Object.keys(config).sort()).toEqual(['bitcoin', 'bitcoincash', 'ethereum', 'litecoin', 'solana']);
  expect(config.ethereum.contracts.erc20_usdt).toBe(nets.state.ethereum!.tokens.erc20_usdt);
  expect(config.solana.contracts.sol_usdc).toBe(nets.state.solana!.tokens.sol_usdc);
  for (const a of Object.values(adapters)) expect((await a.head()).height).toBeGreaterThanOrEqual(0n);
  // The gateway's sponsors are funded.
  const { evmGasTank, solFeePayer } = sponsorAddresses(seed);
  expect(BigInt(await jsonRpc<string>(nets.env.ETHEREUM_RPC_URL, 'eth_getBalance', [evmGasTank, 'latest']))).toBeGreaterThan(0n);
  const sol = await jsonRpc<{ value: number }>(nets.env.SOLANA_RPC_URL, 'getBalance', [solFeePayer, { commitment: 'confirmed' }]);
  expect(sol.value).toBeGreaterThan(0);
});

test('the env names the WebSocket endpoints of anvil and surfnet, and each announces its new heads', async () => {
  const config = chainConfigFromEnv(nets.env);
  const heads: Record<string, number> = { ethereum: 0, solana: 0 };
  const states: string[] = [];
  const feeds = ['ethereum', 'solana'].map((network) =>
    openHeadFeed(network, config[network].wsUrl!, () => heads[network]++, { onState: (s) => states.push(`${network} ${s}`) }),
  );
  try {
    // One wake at subscription, then one per block (anvil, 1 s) or slot (surfnet, 100 ms).
    await waitFor(() => heads.ethereum >= 3 && heads.solana >= 3, 20_000, 'new heads from both nodes');
    expect(states.sort()).toEqual(['ethereum subscribed', 'solana subscribed']);
  } finally {
    for (const f of feeds) f.close();
  }
  expect(config.litecoin.wsUrl).toBeUndefined();
  expect(() => chainConfigFromEnv({ ETHEREUM_RPC_URL: 'http://node:8545', ETHEREUM_WS_URL: 'http://node:8546' })).toThrow(
    'invalid configuration: ETHEREUM_WS_URL must be a ws:// or wss:// URL',
  );
  expect(() => openHeadFeed('litecoin', 'ws://127.0.0.1:1', () => undefined)).toThrow('litecoin has no head feed');
});

test('`devnet pay` prints a txid that lands at the address', async () => {
  const to = adapters.ethereum.deriveAddressIn(5n);
  const from = await adapters.ethereum.head();
  const txid = await cli(dir, 'pay', '--ticker', 'erc20_usdt', '--to', to, '--amount', '12.5');
  expect(txid).toMatch(/^0x[0-9a-f]{64}$/);
  const batch = await adapters.ethereum.scan(from, 100);
  const found = batch.blocks.flatMap((b) => b.deposits).filter((d) => d.recipient === to);
  expect(found.map((d) => [d.txid, d.ticker, d.amount])).toEqual([[txid, 'erc20_usdt', 12_500_000n]]);

  const solTo = adapters.solana.deriveAddressIn(5n);
  expect(await cli(dir, 'pay', '--ticker', 'sol', '--to', solTo, '--amount', '0.25')).toMatch(/^[1-9A-HJ-NP-Za-km-z]{80,90}$/);
});

test.each([
  ['btc', 'bitcoin', /^bcrt1[02-9ac-hj-np-z]{39,59}$/],
  ['bch', 'bitcoincash', /^bchreg:[02-9ac-hj-np-z]{42}$/],
])('%s: `devnet address` prints a payout address, `pay` a txid the adapter finds after `mine`', async (ticker, network, shape) => {
  const adapter = adapters[network];
  const address = await cli(dir, 'address', '--ticker', ticker);
  expect(address).toMatch(shape);
  expect(adapter.validateAddress(address)).toBe(true);
  const to = adapter.deriveAddressIn(7n);
  const from = await adapter.head();
  const txid = await cli(dir, 'pay', '--ticker', ticker, '--to', to, '--amount', '0.125');
  expect(BigInt(await cli(dir, 'mine', '--ticker', ticker, '--blocks', '1'))).toBe(from.height + 1n);
  const batch = await adapter.scan(from, 10);
  const found = batch.blocks.flatMap((b) => b.deposits).filter((d) => d.recipient === to);
  expect(found.map((d) => [d.txid, d.ticker, d.amount])).toEqual([[txid, ticker, 12_500_000n]]);
});

test('`devnet mine` mines regtest blocks', async () => {
  const before = (await adapters.litecoin.head()).height;
  expect(BigInt(await cli(dir, 'mine', '--ticker', 'ltc', '--blocks', '3'))).toBe(before + 3n);
});

test("the local bitcoin node takes a payment whatever locktime its wallet's anti-fee-sniping picks, 21 included", async () => {
  const st = nets.state.bitcoin!;
  // Bitcoin Knots refuses nLockTime 21 as a "parasite" (CAT-21) unless told not to; btcd has no wallet here.
  if (st.family === 'btcd') return expect(st.node).toBe('btcd');
  const wallet = new BitcoinRpc(st.walletUrl);
  const to = await wallet.call<string>('getnewaddress', ['', 'bech32']);
  const raw = await wallet.call<string>('createrawtransaction', [[], [{ [to]: '0.01' }], 21]);
  const funded = await wallet.call<{ hex: string }>('fundrawtransaction', [raw]);
  const signed = await wallet.call<{ hex: string; complete: boolean }>('signrawtransactionwithwallet', [funded.hex]);
  expect(signed.complete).toBe(true);
  const decoded = await wallet.call<{ locktime: number; txid: string }>('decoderawtransaction', [signed.hex]);
  expect(decoded.locktime).toBe(21);
  expect(await wallet.call<string>('sendrawtransaction', [signed.hex])).toBe(decoded.txid);
  const from = await adapters.bitcoin.head();
  await cli(dir, 'mine', '--ticker', 'btc', '--blocks', '1');
  const batch = await adapters.bitcoin.scan(from, 10);
  expect(batch.blocks.flatMap((b) => b.txids)).toContain(decoded.txid);
});
