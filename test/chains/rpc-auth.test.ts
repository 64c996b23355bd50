import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChainAdapter } from '../../src/chains/adapter';
import type { EvmAdapter } from '../../src/chains/evm/adapter';
import { createAdapter } from '../../src/chains/factory';
import { HdSeed } from '../../src/chains/keys';
import { BitcoinRpc } from '../../src/chains/utxo/rpc';

/**
 * RPC credentials in an endpoint's URL (userinfo) reach the node as HTTP basic auth from every family's
 * client (ethers, web3.js, the Bitcoin Core client), and no error of theirs repeats them: a node that
 * refuses a call answers with the URL's key in its own words, and the adapter's error holds neither.
 */
const SECRET = 'Mk0b5ecret9';
const AUTH = `Basic ${Buffer.from(`rpcuser:${SECRET}`).toString('base64')}`;
const seed = HdSeed.fromMnemonic('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
let server: http.Server;
let base: string;
const seen: Array<{ auth: string | undefined; url: string | undefined; method: string }> = [];

/** Answers only with the right Authorization; `fail` methods as a node that refuses and repeats the request line. */
function answer(method: string): unknown {
  switch (method) {
    case 'eth_chainId': return '0x7a69';
    case 'eth_blockNumber': return '0x2a';
    case 'getMinimumBalanceForRentExemption': return 2039280;
    case 'getRecentPrioritizationFees': return [];
    case 'getblockcount': return 42;
    default: return undefined;
  }
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const calls = JSON.parse(body) as { id: unknown; method: string } | Array<{ id: unknown; method: string }>;
      const list = Array.isArray(calls) ? calls : [calls];
      for (const c of list) seen.push({ auth: req.headers.authorization, url: req.url, method: c.method });
      if (req.headers.authorization !== AUTH) {
        res.writeHead(401).end('unauthorized');
        return;
      }
      if (list.some((c) => answer(c.method) === undefined)) {
        res.writeHead(502, { 'content-type': 'text/plain' }).end(`upstream refused POST ${req.url} with key ${SECRET}`);
        return;
      }
      const out = list.map((c) => ({ jsonrpc: '2.0', id: c.id, result: answer(c.method) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(calls) ? out : out[0]));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://rpcuser:${SECRET}@127.0.0.1:${(server.address() as AddressInfo).port}/v2/?api-key=${SECRET}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const runtime = (mode: 'regtest' | 'mainnet' = 'regtest') => ({ mode, rpcUrl: base, contracts: {} });

/** The adapter's error for a call the node refuses: its message and name, never the secret. */
async function refusal(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
  throw new Error('the call was expected to fail');
}

it('EVM (ethers): basic auth on every call, and no secret in its errors', async () => {
  const adapter = (await createAdapter('ethereum', runtime(), seed)) as EvmAdapter;
  expect(await adapter.provider.getBlockNumber()).toBe(42);
  const error = await refusal(() => adapter.head());
  expect(error).toMatch(/^NodeUnavailableError: /);
  expect(error).not.toContain(SECRET);
  expect(seen.filter((s) => s.method === 'eth_blockNumber').map((s) => s.auth)).toEqual([AUTH]);
});

it('Solana (web3.js): basic auth on every call, and no secret in its errors', async () => {
  // Mainnet mode: the registry's USDC mint, no local token to configure.
  const adapter: ChainAdapter = await createAdapter('solana', runtime('mainnet'), seed);
  const cost = await adapter.estimateForwardCost('sol_usdc', 'default');
  expect(cost.sponsorCost).toBeGreaterThan(2039280n);
  const error = await refusal(() => adapter.head());
  // The Solana transport's typed NodeUnavailableError for a status other than 2xx (src/chains/sol/rpc.ts).
  expect(error).toMatch(/^HttpStatusError: RPC answered HTTP 502$/);
  expect(error).not.toContain(SECRET);
  expect(seen.filter((s) => s.method === 'getMinimumBalanceForRentExemption').map((s) => s.auth)).toEqual([AUTH]);
});

it('UTXO (Bitcoin Core client): basic auth, and no secret in its errors', async () => {
  const rpc = new BitcoinRpc(base);
  expect(await rpc.call<number>('getblockcount')).toBe(42);
  const error = await refusal(() => rpc.call('getbestblockhash'));
  expect(error).not.toContain(SECRET);
  expect(seen.filter((s) => s.method === 'getblockcount').map((s) => s.auth)).toEqual([AUTH]);
});

it('every request kept the key in its query and sent the credentials only as a header', () => {
  expect(seen.length).toBeGreaterThan(0);
  for (const s of seen) expect([s.auth, s.url]).toEqual([AUTH, `/v2/?api-key=${SECRET}`]);
});
