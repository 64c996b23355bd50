import { headHub } from '../../src/detection/heads';

/**
 * The worker's head feeds as its activities see them (src/detection/heads.ts): a window only while a feed
 * is live, and a wait that ends at the next head, at once when one came after the count the caller
 * holds, or at its bound.
 */
describe('headHub', () => {
  it('gives a window only for a network whose feed is live, and none when the window is 0', () => {
    const hub = headHub(4000);
    expect(hub.watchMs('ethereum')).toBe(0);
    hub.live('ethereum', true);
    expect(hub.watchMs('ethereum')).toBe(4000);
    expect(hub.watchMs('solana')).toBe(0);
    hub.live('ethereum', false);
    expect(hub.watchMs('ethereum')).toBe(0);
    const off = headHub(0);
    off.live('ethereum', true);
    expect(off.watchMs('ethereum')).toBe(0);
  });

  it('ends a wait at the next head of its network, not of another', async () => {
    const hub = headHub(4000);
    const seen = hub.seen('ethereum');
    const wait = hub.next('ethereum', seen, 10_000);
    hub.head('solana');
    hub.head('ethereum');
    await expect(wait).resolves.toBe(true);
    expect(hub.seen('ethereum')).toBe(seen + 1);
    expect(hub.seen('solana')).toBe(1);
  });

  it('ends at once when a head came after the count the caller holds (between its broadcast and its wait)', async () => {
    const hub = headHub(4000);
    const before = hub.seen('ethereum');
    hub.head('ethereum');
    const started = Date.now();
    await expect(hub.next('ethereum', before, 10_000)).resolves.toBe(true);
    expect(Date.now() - started).toBeLessThan(100);
  });

  it('ends with false at its bound when no head comes', async () => {
    const hub = headHub(4000);
    const started = Date.now();
    await expect(hub.next('ethereum', hub.seen('ethereum'), 150)).resolves.toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });
});
