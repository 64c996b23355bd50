import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { JsonRpcProvider, Network, Wallet } from 'ethers';
import { chainConfigFromEnv, DEFAULT_RPC_BATCH } from '../../src/chains/config';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { EvmAdapter } from '../../src/chains/evm/adapter';
import { testSeed, tmpDir } from '../helpers/nodes';

/**
 * The EVM adapter's JSON-RPC calls made together go to the node as batches of at most `{NETWORK}_RPC_BATCH`
 * (default 10), through a counting proxy in front of a real anvil: every call gets the answer it gets alone,
 * a call the node refuses fails alone, and with 1 each call is its own request.
 */
let node: AnvilDevnet;
let proxy: http.Server;
let proxyUrl: string;
/** HTTP requests and JSON-RPC calls the proxy relayed. */
const seen = { requests: 0, calls: 0 };

beforeAll(async () => {
  node = await startAnvil({ dir: tmpDir('gw-batch-anvil-') });
  const upstream = new URL(node.rpcUrl);
  proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const parsed = JSON.parse(body.toString()) as unknown;
      seen.requests++;
      seen.calls += Array.isArray(parsed) ? parsed.length : 1;
      const out = http.request({ host: upstream.hostname, port: upstream.port, path: upstream.pathname, method: 'POST', headers: { 'content-type': 'application/json' } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
        answer.pipe(res);
      });
      out.on('error', () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 60_000);
afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await node?.stop();
});

const adapter = (rpcBatch?: number) =>
  new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: proxyUrl, ...(rpcBatch !== undefined ? { rpcBatch } : {}), chainId: node.chainId, seed: testSeed(), tokens: node.tokens });

/** Funded and empty accounts, each with its own balance, so that a mixed-up answer shows. */
async function accounts(n: number): Promise<string[]> {
  const list = Array.from({ length: n }, () => Wallet.createRandom().address);
  const direct = new JsonRpcProvider(node.rpcUrl, Network.from(node.chainId), { staticNetwork: true, batchMaxCount: 1 });
  try {
    for (const [i, a] of list.entries()) if (i % 2 === 0) await direct.send('anvil_setBalance', [a, `0x${(1_000_000 + i).toString(16)}`]);
  } finally {
    direct.destroy();
  }
  return list;
}

it('calls made together go in batches of at most 10 by default, each with its own answer', async () => {
  const list = await accounts(40);
  const a = adapter();
  try {
    seen.requests = 0;
    seen.calls = 0;
    const balances = await Promise.all(list.map((x) => a.provider.getBalance(x)));
    expect(balances).toEqual(list.map((_, i) => (i % 2 === 0 ? BigInt(1_000_000 + i) : 0n)));
    expect(seen.calls).toBe(40);
    expect(seen.requests).toBeGreaterThanOrEqual(40 / DEFAULT_RPC_BATCH);
    expect(seen.requests).toBeLessThanOrEqual(8);
  } finally {
    a.provider.destroy();
  }
}, 60_000);

it('a call the node refuses fails alone; the calls batched with it are answered', async () => {
  const list = await accounts(6);
  const a = adapter();
  try {
    const settled = await Promise.allSettled([
      ...list.map((x) => a.provider.getBalance(x)),
      a.provider.broadcastTransaction('0x02deadbeef'),
      a.provider.send('eth_noSuchMethod', []),
    ]);
    expect(settled.slice(0, 6).map((s) => (s.status === 'fulfilled' ? s.value : s.reason))).toEqual(list.map((_, i) => (i % 2 === 0 ? BigInt(1_000_000 + i) : 0n)));
    expect(settled.slice(6).map((s) => s.status)).toEqual(['rejected', 'rejected']);
  } finally {
    a.provider.destroy();
  }
}, 60_000);

it('with ETHEREUM_RPC_BATCH=1 each call is a request of its own', async () => {
  const list = await accounts(12);
  const a = adapter(chainConfigFromEnv({ ETHEREUM_RPC_URL: proxyUrl, ETHEREUM_RPC_BATCH: '1' }).ethereum.rpcBatch);
  try {
    seen.requests = 0;
    seen.calls = 0;
    await Promise.all(list.map((x) => a.provider.getBalance(x)));
    expect([seen.requests, seen.calls]).toEqual([12, 12]);
  } finally {
    a.provider.destroy();
  }
}, 60_000);

it('{NETWORK}_RPC_BATCH takes a whole number from 1 to 100; anything else is refused by name', () => {
  expect(chainConfigFromEnv({ ETHEREUM_RPC_URL: 'http://x' }).ethereum.rpcBatch).toBeUndefined();
  expect(chainConfigFromEnv({ ETHEREUM_RPC_URL: 'http://x', ETHEREUM_RPC_BATCH: '100' }).ethereum.rpcBatch).toBe(100);
  for (const bad of ['0', '101', '2.5', '-1', 'ten', ' 5']) {
    expect(() => chainConfigFromEnv({ ETHEREUM_RPC_URL: 'http://x', ETHEREUM_RPC_BATCH: bad })).toThrow('ETHEREUM_RPC_BATCH must be a whole number from 1 to 100');
  }
});
