/**
 * The watcher woken by its network's head feed ({NETWORK}_WS_URL), on a live anvil and the real PostgreSQL:
 * a new head makes it read at once, a dropped feed is opened again, and while the feed is live the loop
 * polls at the feed's long interval, back on the short one the moment the feed drops.
 */
import { Wallet, parseEther } from 'ethers';
import { paymentConfigs } from '../../src/db/schema';
import { jsonRpc } from '../../src/chains/json-rpc';
import { startWatchers, type MatchedDeposit } from '../../src/detection/watcher';
import { openHeadFeed } from '../../src/detection/heads';
import { anvilWatchBed, type AnvilWatchBed } from '../helpers/anvil-watch';
import { waitFor } from '../helpers/process';
import { tcpProxy } from '../helpers/tcp-proxy';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(120_000);

let bed: AnvilWatchBed;
/** address_in of the one configuration (eth, index 1), and the customer who pays it. */
let addressIn: string;
let customer: Wallet;

beforeAll(async () => {
  bed = await anvilWatchBed('gw-watch-feed-');
  addressIn = (await bed.registry.get('ethereum')).deriveAddressIn(1n);
  await bed.db.insert(paymentConfigs).values({
    ...callbackColumns('https://shop.example/cb/feed'), ticker: 'eth', family: 'evm', addressIn, addressOut: Wallet.createRandom().address,
    derivationIndex: 1n, notifyPending: false, notifyConfirmations: 12, post: 0, json: 0, convert: 0, priority: 'default',
  });
  customer = new Wallet(bed.node.customerKey, bed.provider);
});

afterAll(async () => {
  await bed?.close();
});

/** The network's watcher loop on the bed's adapters and database. */
const watch = (opts: Omit<Parameters<typeof startWatchers>[0], 'networks' | 'adapter' | 'db'>) =>
  startWatchers({ networks: bed.registry.networks(), adapter: (n) => bed.registry.get(n), db: bed.db, ...opts });

test('a new head wakes the watcher: a deposit is matched long before the poll interval', async () => {
  const seen: MatchedDeposit[] = [];
  const wsUrl = bed.node.rpcUrl.replace(/^http/, 'ws');
  let passes = 0;
  const watchers = watch({
    intervalMs: 600_000,
    onMatch: async (_n, m) => void seen.push(...m),
    onBatch: async () => void passes++,
    heads: (network, wake) => openHeadFeed(network, wsUrl, wake),
  });
  try {
    // The first passes have run (one at start, one at the subscription's wake) and the loop sleeps for ten
    // minutes; anvil mines this transaction at once, and only its new head can wake the watcher.
    await waitFor(() => passes >= 2, 10_000, 'the first passes');
    await new Promise((r) => setTimeout(r, 500));
    const before = passes;
    await (await customer.sendTransaction({ to: addressIn, value: parseEther('0.07') })).wait();
    await waitFor(() => seen.some((m) => m.deposit.amount === parseEther('0.07')), 15_000, 'the woken watcher to match the deposit');
    expect(passes).toBeGreaterThan(before);
  } finally {
    await watchers.stop();
  }
});

test('a dropped head feed is opened again and goes on waking', async () => {
  const proxy = await tcpProxy(Number(new URL(bed.node.rpcUrl).port));
  const states: string[] = [];
  let heads = 0;
  const feed = openHeadFeed('ethereum', `ws://127.0.0.1:${proxy.port}`, () => heads++, { retryMs: 100, onState: (s) => states.push(s) });
  try {
    await waitFor(() => states.includes('subscribed'), 10_000, 'the feed to subscribe');
    proxy.cut();
    await waitFor(() => states.filter((s) => s === 'subscribed').length === 2, 10_000, 'the feed to subscribe again');
    expect(states.slice(0, 3)).toEqual(['subscribed', 'dropped', 'subscribed']);
    const before = heads;
    await jsonRpc(bed.node.rpcUrl, 'evm_mine');
    await waitFor(() => heads > before, 10_000, 'a head through the new connection');
  } finally {
    feed.close();
    await proxy.close();
  }
});

test('while its head feed is live the watcher polls at the feed interval; a feed that drops puts it back on the short one at once', async () => {
  const proxy = await tcpProxy(Number(new URL(bed.node.rpcUrl).port));
  let passes = 0;
  const watchers = watch({
    intervalMs: 100,
    feedIntervalMs: 600_000,
    onMatch: async () => undefined,
    onBatch: async () => void passes++,
    // The feed never reconnects within the test: after the cut it stays dropped.
    heads: (network, wake, live) => openHeadFeed(network, `ws://127.0.0.1:${proxy.port}`, wake, { retryMs: 600_000, onState: (s) => live(s === 'subscribed') }),
  });
  try {
    await waitFor(() => passes >= 2, 10_000, 'the first passes (start, subscription)');
    await new Promise((r) => setTimeout(r, 300));
    const live = passes;
    // No block is mined: a live feed announces none, and the ten-minute poll does not come.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(passes - live).toBeLessThanOrEqual(1);
    proxy.cut();
    const dropped = passes;
    await new Promise((r) => setTimeout(r, 1_500));
    // 100 ms polls from the drop on: well over five passes in 1.5 s.
    expect(passes - dropped).toBeGreaterThan(5);
  } finally {
    await watchers.stop();
    await proxy.close();
  }
});
