/**
 * The long-poll head feed of Bitcoin-family nodes ({NETWORK}_HEAD_FEED=longpoll, src/detection/long-poll-feed.ts)
 * on a live litecoind regtest and a live bchd: each block wakes it while the call is held, a block replaced at
 * the same height too, a cut connection is made again, a closed feed makes no more calls (the node lets its held
 * one go at its timeout), and a node that does not serve `waitforblockheight` is refused once (the watcher polls alone).
 */
import { chainConfigFromEnv } from '../../src/chains/config';
import { BitcoinRpc } from '../../src/chains/utxo/rpc';
import { openLongPollFeed } from '../../src/detection/long-poll-feed';
import type { HeadFeed } from '../../src/detection/heads';
import { startLitecoind, type LitecoindDevnet } from '../../devnet/litecoind';
import { startUtxoDevnets } from '../../devnet/utxo-devnets';
import { tmpDir } from '../helpers/nodes';
import { waitFor } from '../helpers/process';
import { tcpProxy } from '../helpers/tcp-proxy';

jest.setTimeout(180_000);

let node: LitecoindDevnet;
let rpc: BitcoinRpc;
let wallet: BitcoinRpc;
const feeds: HeadFeed[] = [];

beforeAll(async () => {
  node = await startLitecoind({ dir: tmpDir('gw-ltc-longpoll-') });
  rpc = new BitcoinRpc(node.rpcUrl);
  wallet = new BitcoinRpc(node.walletUrl);
});

afterAll(async () => {
  for (const f of feeds) f.close();
  await node?.stop();
});

// A fresh address each time: a block mined again on the same parent to the same address in the same second
// would be the invalidated one again, and refused.
const mine = async (n = 1) => rpc.call<string[]>('generatetoaddress', [n, await wallet.call<string>('getnewaddress')]);

/** A feed on `url` that counts its heads and records its states. */
function counted(url: string, waitMs = 15_000) {
  const seen = { heads: 0, states: [] as string[] };
  const feed = openLongPollFeed(url, () => seen.heads++, { waitMs, retryMs: 100, onState: (s, d) => seen.states.push(d ? `${s}: ${d}` : s) });
  feeds.push(feed);
  return { seen, feed };
}

test('each block wakes the feed while its call is held, one head per block', async () => {
  const { seen, feed } = counted(node.rpcUrl);
  // Subscribed: one head at once (a block may have come before the feed), then one per block.
  await waitFor(() => seen.heads === 1, 10_000, 'the first head');
  expect(seen.states).toEqual(['subscribed']);
  for (let i = 2; i <= 4; i++) {
    const started = Date.now();
    await mine();
    await waitFor(() => seen.heads === i, 5_000, `head ${i}`);
    // Far below the call's 15 s: the node answered the held call when the block came.
    expect(Date.now() - started).toBeLessThan(3_000);
  }
  feed.close();
  // The block also ends the call the node still holds for the closed feed.
  await mine();
  await new Promise((r) => setTimeout(r, 500));
  expect(seen.heads).toBe(4);
});

test('a block replaced at the same height is news: the call that ends without a higher block says so', async () => {
  const { seen, feed } = counted(node.rpcUrl, 1_000);
  await waitFor(() => seen.heads === 1, 10_000, 'the first head');
  const [tipHash] = await mine();
  await waitFor(() => seen.heads === 2, 5_000, 'the new block');
  // The tip is invalidated and another block mined at its height: no higher block, a different tip.
  await rpc.call('invalidateblock', [tipHash]);
  await mine();
  await waitFor(() => seen.heads >= 3, 5_000, 'the replaced block');
  feed.close();
});

test('a cut connection is dropped and made again; heads go on', async () => {
  const port = Number(new URL(node.rpcUrl).port);
  const proxy = await tcpProxy(port);
  const url = new URL(node.rpcUrl);
  url.port = String(proxy.port);
  const { seen, feed } = counted(url.toString().replace(/\/$/, ''), 2_000);
  try {
    await waitFor(() => seen.heads === 1, 10_000, 'the first head');
    proxy.cut();
    await waitFor(() => seen.states.length === 3, 10_000, 'dropped and subscribed again');
    expect(seen.states).toEqual(['subscribed', 'dropped: connection closed', 'subscribed']);
    const before = seen.heads;
    await mine();
    await waitFor(() => seen.heads === before + 1, 5_000, 'a head after the reconnection');
  } finally {
    feed.close();
    await proxy.close();
  }
});

test('a closed feed makes no more calls; the node lets go of the one it held at its timeout', async () => {
  // The node serves at most -rpcthreads calls at once, and does not notice a caller gone: the call's own
  // timeout bounds how long a closed feed keeps one of its threads.
  const { seen, feed } = counted(node.rpcUrl, 2_000);
  await waitFor(() => seen.heads === 1, 10_000, 'the first head');
  const held = async () =>
    (await rpc.call<{ active_commands: Array<{ method: string }> }>('getrpcinfo')).active_commands.filter((c) => c.method === 'waitforblockheight').length;
  // The earlier tests' closed feeds' calls end within their 2 s.
  await waitFor(async () => (await held()) === 1, 10_000, "the feed's call alone");
  feed.close();
  await waitFor(async () => (await held()) === 0, 4_000, 'the held call ended');
  await new Promise((r) => setTimeout(r, 2_500));
  expect(await held()).toBe(0);
  expect(seen.states).toEqual(['subscribed']);
});

test('bchd, which has no waitforblockheight, is refused once: the watcher polls alone', async () => {
  const nets = await startUtxoDevnets(tmpDir('gw-bch-longpoll-'), { litecoin: false, bitcoin: false, bitcoincash: true, blockIntervalMs: 0 });
  try {
    expect(nets.states.bitcoincash?.family).toBe('btcd');
    const { seen } = counted(nets.states.bitcoincash!.rpcUrl);
    await waitFor(() => seen.states.length === 1, 10_000, 'the refusal');
    expect(seen.states[0]).toMatch(/^dropped: subscription refused: waitforblockheight: /);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(seen.states).toHaveLength(1);
    expect(seen.heads).toBe(0);
  } finally {
    await nets.stop();
  }
});

test('{NETWORK}_HEAD_FEED: longpoll on a Bitcoin-family network only', () => {
  expect(chainConfigFromEnv({ LITECOIN_RPC_URL: 'http://u:p@node:9332', LITECOIN_HEAD_FEED: 'longpoll' }).litecoin.headFeed).toBe('longpoll');
  expect(chainConfigFromEnv({ LITECOIN_RPC_URL: 'http://u:p@node:9332' }).litecoin.headFeed).toBeUndefined();
  expect(() => chainConfigFromEnv({ LITECOIN_RPC_URL: 'http://node:9332', LITECOIN_HEAD_FEED: 'zmq' })).toThrow(
    'invalid configuration: LITECOIN_HEAD_FEED must be longpoll (or unset)',
  );
  expect(() => chainConfigFromEnv({ ETHEREUM_RPC_URL: 'http://node:8545', ETHEREUM_HEAD_FEED: 'longpoll' })).toThrow(
    'invalid configuration: ETHEREUM_HEAD_FEED is for Bitcoin-family (UTXO) networks; ETHEREUM takes ETHEREUM_WS_URL',
  );
});
