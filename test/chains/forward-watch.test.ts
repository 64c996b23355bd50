/**
 * The forward's watch for its inclusion (activities/forward-watch.ts), on a live anvil and the real
 * PostgreSQL: with a live head feed, the forward reads its fate at each head announced after its broadcast
 * (none before it) and once after its window, and the watcher holds its hint back for that window
 * (forward_watch_until); without a live feed nothing is watched.
 */
import { parseEther } from 'ethers';
import { sql } from 'drizzle-orm';
import type { ChainAdapter } from '../../src/chains/adapter';
import { headHub, openHeadFeed, type HeadFeed } from '../../src/detection/heads';
import { dueForwardBed } from '../helpers/due-forward';

jest.setTimeout(120_000);

const bed = dueForwardBed();
const { due, activitiesWith } = bed;
let feed: HeadFeed | undefined;

afterAll(() => feed?.close());

/** forward_watch_until, and the database's clock now, in ms. */
async function watchWindow(uuid: string): Promise<{ until: number | null; now: number }> {
  const { rows } = (await bed.database.db.execute(sql`SELECT forward_watch_until AS until, now() AS now FROM payments WHERE uuid = ${uuid}`)) as unknown as {
    rows: Array<{ until: string | Date | null; now: string | Date }>;
  };
  return { until: rows[0].until === null ? null : new Date(rows[0].until).getTime(), now: new Date(rows[0].now).getTime() };
}

test('with a live head feed, the forward is read at the head that mines it: confirmed, in the same activity', async () => {
  const hub = headHub(4000);
  // anvil's own newHeads over its WebSocket, as the worker's feed reports them.
  const subscribed = new Promise<void>((resolve) => {
    feed = openHeadFeed('ethereum', bed.node.rpcUrl.replace(/^http/, 'ws'), () => hub.head('ethereum'), {
      onState: (state) => {
        hub.live('ethereum', state === 'subscribed');
        if (state === 'subscribed') resolve();
      },
    });
  });
  await subscribed;
  const watching = activitiesWith(hub);
  const uuid = await due(34n, parseEther('1'));
  const started = Date.now();
  const { txidOut, fate } = await watching.forward(uuid);
  const took = Date.now() - started;
  // anvil mines the forward as it takes it; its head comes at once, and the reading there finds it.
  expect(fate).toEqual({ status: 'confirmed', txidOut });
  expect(took).toBeLessThan(4000);
  // The watcher holds its hint back for the window, from the database's clock.
  const w = await watchWindow(uuid);
  expect(w.until).not.toBeNull();
  expect(w.until! - w.now).toBeGreaterThan(4000 - took - 1000);
  expect(w.until! - w.now).toBeLessThanOrEqual(4000);
});

test('a forward mined while no head is announced is found by the reading after the window', async () => {
  // A feed that is live but says nothing (a node that stopped announcing): the window's end reads.
  const hub = headHub(400);
  hub.live('ethereum', true);
  const watching = activitiesWith(hub);
  const uuid = await due(35n, parseEther('1'));
  const started = Date.now();
  const sent = await watching.forward(uuid);
  expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  expect(sent.fate).toEqual({ status: 'confirmed', txidOut: sent.txidOut });
  // Its window has passed: a later block holding it would be hinted again.
  const w = await watchWindow(uuid);
  expect(w.until).toBeLessThanOrEqual(w.now);
});

test('the watch reads at a head announced after the broadcast, not at one announced while the forward was signed', async () => {
  // Heads announced by the test: one while the forward is prepared under its lock, one 300 ms after the
  // broadcast. anvil mines the forward at once; the only reading is the one at the second head.
  const hub = headHub(3000);
  hub.live('ethereum', true);
  let readings = 0;
  let broadcastAt = 0;
  const a = bed.chain.adapter;
  const adapter: ChainAdapter = Object.assign(Object.create(a) as ChainAdapter, {
    prepareForward: async (...args: Parameters<ChainAdapter['prepareForward']>) => {
      const plan = await a.prepareForward(...args);
      hub.head('ethereum');
      return plan;
    },
    broadcast: async (...args: Parameters<ChainAdapter['broadcast']>) => {
      await a.broadcast(...args);
      broadcastAt = Date.now();
      setTimeout(() => hub.head('ethereum'), 300);
    },
    forwardStatus: (...args: Parameters<ChainAdapter['forwardStatus']>) => {
      readings++;
      return a.forwardStatus(...args);
    },
  });
  const watching = activitiesWith(hub, adapter);
  const uuid = await due(37n, parseEther('1'));
  const sent = await watching.forward(uuid);
  const waited = Date.now() - broadcastAt;
  expect(sent.fate).toEqual({ status: 'confirmed', txidOut: sent.txidOut });
  expect(readings).toBe(1);
  // Woken by the head after the broadcast, well before the window's end.
  expect(waited).toBeGreaterThanOrEqual(300);
  expect(waited).toBeLessThan(3000);
});

test('without a live head feed nothing is watched: pending, broadcast now, and no window', async () => {
  const hub = headHub(4000);
  const watching = activitiesWith(hub);
  const uuid = await due(36n, parseEther('1'));
  const sent = await watching.forward(uuid);
  expect(sent.fate).toEqual({ status: 'pending', txidOut: sent.txidOut, note: 'broadcast now' });
  expect((await watchWindow(uuid)).until).toBeNull();
});
