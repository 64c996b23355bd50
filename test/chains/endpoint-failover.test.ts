import { JsonRpcProvider, Network, Wallet, parseEther } from 'ethers';
import type { ChainAdapter, Cursor } from '../../src/chains/adapter';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { startLitecoind, type LitecoindDevnet } from '../../devnet/litecoind';
import { jsonRpc } from '../../src/chains/json-rpc';
import { EvmAdapter } from '../../src/chains/evm/adapter';
import { UtxoAdapter } from '../../src/chains/utxo/adapter';
import { BitcoinRpc, fromSats } from '../../src/chains/utxo/rpc';
import { setLogSink, type LogSink } from '../../src/observability/logger';
import { registry } from '../../src/observability/metrics';
import { startHostileRpc, type HostileRpc } from '../helpers/hostile-rpc';
import { testSeed, tmpDir } from '../helpers/nodes';
import { waitFor } from '../helpers/process';

/**
 * Two endpoints of one network, each a proxy in front of the same live node: one freezes its head (a node
 * stuck while still answering) while the other passes. The frozen endpoint is taken out of reads with a
 * log line and a metric, a deposit made after the freeze is found through the other one, and the frozen
 * endpoint comes back once its head moves again. Broadcasts go to every healthy endpoint.
 */
const BOUNDS = { maxLag: 2, stallMs: 1_500, probeMs: 250 };

const lines: string[] = [];
let previousSink: LogSink;
beforeAll(() => {
  previousSink = setLogSink({ write: (l) => { lines.push(l); previousSink.write(l); } });
});
afterAll(() => {
  setLogSink(previousSink);
});

async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = m?.values.find((x) => Object.entries(labels).every(([k, want]) => String(x.labels[k]) === want));
  return v?.value;
}

const logged = (msg: string, network: string, endpoint: string) =>
  lines.some((l) => {
    const o = JSON.parse(l) as { msg?: string; network?: string; endpoint?: string };
    return o.msg === msg && o.network === network && o.endpoint === endpoint;
  });

/** The frozen endpoint out, a deposit after the freeze found, the endpoint back after the thaw. */
async function freezeScenario(opts: {
  network: string;
  adapter: ChainAdapter;
  frozen: HostileRpc;
  passing: HostileRpc;
  mine(n: number): Promise<void>;
  pay(to: string): Promise<string>;
}): Promise<void> {
  const { network, adapter, frozen, mine } = opts;
  await mine(1);
  // Both endpoints probed at the node's head: the frozen one keeps that head.
  const start = Number((await adapter.head()).height);
  await waitFor(async () => (await metric('gateway_rpc_endpoint_head', { network, endpoint: '0' })) === start && (await metric('gateway_rpc_endpoint_head', { network, endpoint: '1' })) === start, 20_000, 'both endpoints probed');
  expect(await metric('gateway_rpc_healthy_endpoints', { network })).toBe(2);
  const removalsBefore = (await metric('gateway_rpc_endpoint_removals_total', { network, endpoint: '0' })) ?? 0;
  frozen.freezeHead();
  const before: Cursor = await adapter.head();
  // The node moves on; the frozen endpoint keeps answering its old head.
  await mine(BOUNDS.maxLag + 2);
  await waitFor(async () => (await metric('gateway_rpc_endpoint_healthy', { network, endpoint: '0' })) === 0, 20_000, 'the frozen endpoint taken out');
  expect(logged('rpc endpoint taken out of reads', network, '0')).toBe(true);
  expect(await metric('gateway_rpc_endpoint_healthy', { network, endpoint: '1' })).toBe(1);
  expect(await metric('gateway_rpc_healthy_endpoints', { network })).toBe(1);
  expect(((await metric('gateway_rpc_endpoint_removals_total', { network, endpoint: '0' })) ?? 0) - removalsBefore).toBe(1);
  // Each endpoint's head, the best one and its block's age against the wall clock are metrics too.
  const heads = [await metric('gateway_rpc_endpoint_head', { network, endpoint: '0' }), await metric('gateway_rpc_endpoint_head', { network, endpoint: '1' })];
  // The frozen endpoint's head is one it answered before the freeze (each head call keeps its own).
  expect(heads[0]).toBeLessThanOrEqual(Number(before.height));
  expect(heads[1]).toBeGreaterThan(heads[0]!);
  expect(await metric('gateway_chain_head', { network })).toBe(heads[1]);
  expect(await metric('gateway_chain_head_age_seconds', { network })).toBeGreaterThanOrEqual(0);

  // A deposit after the freeze, in blocks the frozen endpoint never shows: found through the other one.
  const to = adapter.deriveAddressIn(7n);
  const txid = await opts.pay(to);
  await mine(1);
  let cursor: Cursor = before;
  const found: string[] = [];
  await waitFor(async () => {
    const batch = await adapter.scan(cursor);
    cursor = batch.cursor;
    for (const b of batch.blocks) for (const d of b.deposits) if (d.recipient === to) found.push(d.txid);
    return found.length > 0;
  }, 30_000, 'the deposit made after the freeze');
  expect(found).toEqual([txid]);

  frozen.thaw();
  await waitFor(async () => (await metric('gateway_rpc_endpoint_healthy', { network, endpoint: '0' })) === 1, 20_000, 'the endpoint back in');
  expect(logged('rpc endpoint back in reads', network, '0')).toBe(true);
  expect(await metric('gateway_rpc_healthy_endpoints', { network })).toBe(2);
}

describe('two endpoints in front of anvil, one frozen', () => {
  let node: AnvilDevnet;
  let a: HostileRpc;
  let b: HostileRpc;
  let adapter: EvmAdapter;
  let closed = false;
  let direct: JsonRpcProvider;
  let customer: Wallet;
  const mine = async (n: number) => void (await jsonRpc(node.rpcUrl, 'anvil_mine', [`0x${n.toString(16)}`]));

  beforeAll(async () => {
    node = await startAnvil({ dir: tmpDir('gw-failover-anvil-') });
    a = await startHostileRpc({ upstream: node.rpcUrl, enabled: false });
    b = await startHostileRpc({ upstream: node.rpcUrl, enabled: false });
    adapter = new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: `${a.url}, ${b.url}`, chainId: node.chainId, seed: testSeed(), tokens: node.tokens, endpointHealth: BOUNDS });
    direct = new JsonRpcProvider(node.rpcUrl, Network.from(node.chainId), { staticNetwork: true, cacheTimeout: -1 });
    customer = new Wallet(node.customerKey, direct);
  }, 120_000);
  afterAll(async () => {
    if (!closed) await adapter?.close();
    direct?.destroy();
    await a?.close();
    await b?.close();
    await node?.stop();
  });

  it('takes the frozen endpoint out (log, metric), finds a deposit made after the freeze, and takes it back', async () => {
    await freezeScenario({
      network: 'ethereum',
      adapter,
      frozen: a,
      passing: b,
      mine,
      pay: async (to) => (await customer.sendTransaction({ to, value: parseEther('0.5') })).hash,
    });
  });

  it('sends a broadcast to every healthy endpoint, and none to one taken out', async () => {
    const signed = async () => customer.signTransaction(await customer.populateTransaction({ to: Wallet.createRandom().address, value: 1n }));
    const [a0, b0] = [a.calls('eth_sendRawTransaction'), b.calls('eth_sendRawTransaction')];
    const tx = await adapter.provider.broadcastTransaction(await signed());
    await mine(1);
    expect((await direct.getTransactionReceipt(tx.hash))?.status).toBe(1);
    // The second endpoint got the same bytes, already known to the node: the broadcast still counts as sent.
    expect([a.calls('eth_sendRawTransaction') - a0, b.calls('eth_sendRawTransaction') - b0]).toEqual([1, 1]);

    a.freezeHead();
    await mine(BOUNDS.maxLag + 2);
    await waitFor(async () => (await metric('gateway_rpc_endpoint_healthy', { network: 'ethereum', endpoint: '0' })) === 0, 20_000, 'endpoint 0 out');
    const [a1, b1] = [a.calls('eth_sendRawTransaction'), b.calls('eth_sendRawTransaction')];
    const tx2 = await adapter.provider.broadcastTransaction(await signed());
    await mine(1);
    expect((await direct.getTransactionReceipt(tx2.hash))?.status).toBe(1);
    expect([a.calls('eth_sendRawTransaction') - a1, b.calls('eth_sendRawTransaction') - b1]).toEqual([0, 1]);
    a.thaw();
    await waitFor(async () => (await metric('gateway_rpc_endpoint_healthy', { network: 'ethereum', endpoint: '0' })) === 1, 20_000, 'endpoint 0 back');
  });

  it('takes out an endpoint whose head stops while the others advance, even within the lag bound', async () => {
    // The adapter above stops its checks: the metrics below are this one's alone.
    await adapter.close();
    closed = true;
    const slow = new EvmAdapter({
      network: 'ethereum', mode: 'regtest', rpcUrl: `${a.url},${b.url}`, chainId: node.chainId, seed: testSeed(), tokens: node.tokens,
      endpointHealth: { maxLag: 1000, stallMs: 1_500, probeMs: 250 },
    });
    try {
      const removed = async () => (await metric('gateway_rpc_endpoint_removals_total', { network: 'ethereum', endpoint: '0', reason: 'stalled' })) ?? 0;
      const before = await removed();
      const start = Number((await slow.head()).height);
      await waitFor(async () => (await metric('gateway_rpc_endpoint_head', { network: 'ethereum', endpoint: '0' })) === start, 20_000, 'endpoint 0 probed');
      a.freezeHead();
      // One block more on the node every half second: a lag far below the bound, but endpoint 0 never moves.
      const deadline = Date.now() + 20_000;
      while ((await removed()) === before && Date.now() < deadline) {
        await mine(1);
        await new Promise((r) => setTimeout(r, 500));
      }
      expect((await removed()) - before).toBe(1);
      expect(await metric('gateway_rpc_endpoint_healthy', { network: 'ethereum', endpoint: '0' })).toBe(0);
      expect(slow.provider.pool.readOrder().map((e) => e.label)).toEqual(['1']);
      const lag = (await metric('gateway_chain_head', { network: 'ethereum' }))! - (await metric('gateway_rpc_endpoint_head', { network: 'ethereum', endpoint: '0' }))!;
      expect(lag).toBeGreaterThan(0);
      expect(lag).toBeLessThan(1000);
    } finally {
      a.thaw();
      await slow.close();
    }
  });
});

describe('two endpoints in front of litecoind, one frozen', () => {
  let node: LitecoindDevnet;
  let a: HostileRpc;
  let b: HostileRpc;
  let adapter: UtxoAdapter;
  let rpc: BitcoinRpc;
  let wallet: BitcoinRpc;
  const mine = async (n: number) => void (await rpc.call('generatetoaddress', [n, await wallet.call<string>('getnewaddress', ['', 'bech32'])]));

  beforeAll(async () => {
    node = await startLitecoind({ dir: tmpDir('gw-failover-ltc-') });
    rpc = new BitcoinRpc(node.rpcUrl);
    wallet = new BitcoinRpc(node.walletUrl);
    a = await startHostileRpc({ upstream: node.rpcUrl, enabled: false });
    b = await startHostileRpc({ upstream: node.rpcUrl, enabled: false });
    adapter = new UtxoAdapter({ network: 'litecoin', mode: 'regtest', rpcUrl: `${a.url},${b.url}`, seed: testSeed(), endpointHealth: BOUNDS });
  }, 120_000);
  afterAll(async () => {
    await adapter?.close();
    await a?.close();
    await b?.close();
    await node?.stop();
  });

  it('takes the frozen endpoint out (log, metric), finds a deposit made after the freeze, and takes it back', async () => {
    await freezeScenario({
      network: 'litecoin',
      adapter,
      frozen: a,
      passing: b,
      mine,
      pay: (to) => wallet.call<string>('sendtoaddress', [to, fromSats(50_000_000n)]),
    });
  });
});
