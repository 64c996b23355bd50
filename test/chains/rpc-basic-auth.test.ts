import { JsonRpcProvider, Network, Wallet, parseEther } from 'ethers';
import { Keypair } from '@solana/web3.js';
import type { ChainAdapter, Cursor } from '../../src/chains/adapter';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { startLitecoind, type LitecoindDevnet } from '../../devnet/litecoind';
import { startSurfnet, type SurfnetDevnet } from '../../devnet/surfnet';
import type { EvmAdapter } from '../../src/chains/evm/adapter';
import { createAdapter } from '../../src/chains/factory';
import { solFeePayerSeed, evmGasTankKey } from '../../src/chains/sponsor';
import { BitcoinRpc, fromSats } from '../../src/chains/utxo/rpc';
import { registry } from '../../src/observability/metrics';
import { startHostileRpc, type HostileRpc } from '../helpers/hostile-rpc';
import { surfnetChain, testSeed, tmpDir, type LiveChain } from '../helpers/nodes';
import { waitFor } from '../helpers/process';

/**
 * Each family's adapter, made the way the gateway makes it (createAdapter from a runtime config), against a
 * live node behind a proxy that requires basic auth: the credentials of the URL reach the node as an
 * Authorization header on every request (none refused), a deposit is found, and a wrong password is an
 * error that does not repeat it.
 */
const AUTH = { user: 'gw-user', password: 'p@ss:w0rd/secret' };
const SECRET = AUTH.password;

async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  return m?.values.find((x) => Object.entries(labels).every(([k, want]) => String(x.labels[k]) === want))?.value;
}

async function findDeposit(adapter: ChainAdapter, from: Cursor, to: string, txid: string, advance: () => Promise<void>): Promise<void> {
  let cursor = from;
  const found: string[] = [];
  await waitFor(async () => {
    const batch = await adapter.scan(cursor);
    cursor = batch.cursor;
    for (const b of batch.blocks) for (const d of b.deposits) if (d.recipient === to) found.push(d.txid);
    if (found.length === 0) await advance();
    return found.length > 0;
  }, 60_000, 'the deposit through the authenticating proxy');
  expect(found).toEqual([txid]);
}

/** A wrong password fails the calls, and no error says it. */
const wrongPasswordFails = (network: string, proxy: () => HostileRpc) =>
  it('a wrong password is refused, and not repeated in the error', async () => {
    await refused(proxy(), (url) => createAdapter(network, { mode: 'regtest', rpcUrl: url, contracts: {} }, testSeed()));
  });

async function refused(proxy: HostileRpc, make: (url: string) => Promise<ChainAdapter>): Promise<void> {
  const u = new URL(proxy.url);
  u.password = encodeURIComponent('wrong-' + SECRET);
  const refusedBefore = proxy.unauthorized();
  let message = '';
  try {
    const adapter = await make(u.toString());
    try {
      await adapter.head();
    } finally {
      await adapter.close();
    }
  } catch (e) {
    message = `${(e as Error).message} ${String((e as Error).cause ?? '')}`;
  }
  expect(message).not.toBe('');
  expect(message).not.toContain(SECRET);
  expect(message).not.toContain(encodeURIComponent(SECRET));
  expect(proxy.unauthorized()).toBeGreaterThan(refusedBefore);
}

describe('basic auth: anvil behind a proxy that requires it', () => {
  let node: AnvilDevnet;
  let proxy: HostileRpc;
  let adapter: EvmAdapter;
  const seed = testSeed();
  const tank = new Wallet(Buffer.from(evmGasTankKey(seed)).toString('hex'));

  beforeAll(async () => {
    node = await startAnvil({ dir: tmpDir('gw-auth-anvil-'), fund: [tank.address] });
    proxy = await startHostileRpc({ upstream: node.rpcUrl, enabled: false, requireAuth: AUTH });
  }, 120_000);
  afterAll(async () => {
    await adapter?.close();
    await proxy?.close();
    await node?.stop();
  });

  it('reads, finds a deposit and broadcasts with the URL\'s credentials; the gas tank\'s balance is a metric', async () => {
    expect(proxy.url).toContain('gw-user:');
    adapter = (await createAdapter('ethereum', { mode: 'regtest', rpcUrl: proxy.url, contracts: {} }, seed)) as EvmAdapter;
    const direct = new JsonRpcProvider(node.rpcUrl, Network.from(node.chainId), { staticNetwork: true, cacheTimeout: -1 });
    try {
      const customer = new Wallet(node.customerKey, direct);
      const from = await adapter.head();
      expect(from.height).toBe(BigInt(await direct.getBlockNumber()));
      const to = adapter.deriveAddressIn(3n);
      const signed = await customer.signTransaction(await customer.populateTransaction({ to, value: parseEther('0.25') }));
      const sent = await adapter.provider.broadcastTransaction(signed);
      await findDeposit(adapter, from, to, sent.hash, async () => void (await direct.send('anvil_mine', ['0x1'])));
      await waitFor(async () => (await metric('gateway_sponsor_balance', { network: 'ethereum', role: 'gas_tank' })) !== undefined, 20_000, 'the tank metric');
      expect(await metric('gateway_sponsor_balance', { network: 'ethereum', role: 'gas_tank' })).toBe(Number(await direct.getBalance(tank.address)));
    } finally {
      direct.destroy();
    }
    expect(proxy.unauthorized()).toBe(0);
  });

  wrongPasswordFails('ethereum', () => proxy);
});

describe('basic auth: surfnet behind a proxy that requires it', () => {
  let node: SurfnetDevnet;
  let proxy: HostileRpc;
  let chain: LiveChain;
  let adapter: ChainAdapter;
  const seed = testSeed();
  const feePayer = Keypair.fromSeed(solFeePayerSeed(seed));

  beforeAll(async () => {
    node = await startSurfnet({ fund: [feePayer.publicKey.toBase58()], slotTimeMs: 50 });
    chain = await surfnetChain('sol', seed, node);
    proxy = await startHostileRpc({ upstream: node.rpcUrl, enabled: false, requireAuth: AUTH });
  }, 180_000);
  afterAll(async () => {
    await adapter?.close();
    await chain?.adapter.close();
    await proxy?.close();
    await node?.stop();
  });

  it('reads and finds a deposit with the URL\'s credentials; the fee payer\'s balance is a metric', async () => {
    adapter = await createAdapter('solana', { mode: 'regtest', rpcUrl: proxy.url, contracts: { sol_usdc: node.tokens.sol_usdc } }, seed);
    const from = await adapter.head();
    const to = adapter.deriveAddressIn(4n);
    const txid = await chain.pay(to, chain.amount);
    await findDeposit(adapter, from, to, txid, () => new Promise((r) => setTimeout(r, 200)));
    await waitFor(async () => (await metric('gateway_sponsor_balance', { network: 'solana', role: 'fee_payer' })) !== undefined, 20_000, 'the fee payer metric');
    expect(await metric('gateway_sponsor_balance', { network: 'solana', role: 'fee_payer' })).toBe(await node.connection.getBalance(feePayer.publicKey));
    expect(proxy.unauthorized()).toBe(0);
  });

  wrongPasswordFails('solana', () => proxy);
});

describe('basic auth: litecoind behind a proxy that requires its own', () => {
  let node: LitecoindDevnet;
  let proxy: HostileRpc;
  let adapter: ChainAdapter;

  beforeAll(async () => {
    node = await startLitecoind({ dir: tmpDir('gw-auth-ltc-') });
    // The proxy asks for its credentials and sends the node litecoind's own.
    proxy = await startHostileRpc({ upstream: node.rpcUrl, enabled: false, requireAuth: AUTH });
  }, 120_000);
  afterAll(async () => {
    await adapter?.close();
    await proxy?.close();
    await node?.stop();
  });

  it('reads and finds a deposit with the URL\'s credentials', async () => {
    const rpc = new BitcoinRpc(node.rpcUrl);
    const wallet = new BitcoinRpc(node.walletUrl);
    adapter = await createAdapter('litecoin', { mode: 'regtest', rpcUrl: proxy.url, contracts: {} }, testSeed());
    const from = await adapter.head();
    const to = adapter.deriveAddressIn(5n);
    const txid = await wallet.call<string>('sendtoaddress', [to, fromSats(30_000_000n)]);
    await findDeposit(adapter, from, to, txid, async () => void (await rpc.call('generatetoaddress', [1, node.minerAddress])));
    expect(proxy.unauthorized()).toBe(0);
  });

  wrongPasswordFails('litecoin', () => proxy);
});
