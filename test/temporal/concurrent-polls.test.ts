/**
 * The worker's polls of core, several outstanding at once (src/temporal/concurrent-polls.ts): every item
 * handed out is yielded, in the order it came back; never more than n polls out; core's ShutdownError ends
 * the stream only once the polls still out have come back (an activation core handed out is not dropped).
 */
import { pollsAtOnce } from '../../src/temporal/concurrent-polls';

class ShutdownError extends Error {
  name = 'ShutdownError';
}

/** A fake core: each poll waits for the test to hand it an item, an error, or the shutdown. */
function fakeCore() {
  const waiting: Array<{ resolve: (v: number) => void; reject: (e: unknown) => void }> = [];
  let most = 0;
  return {
    poll: () =>
      new Promise<number>((resolve, reject) => {
        waiting.push({ resolve, reject });
        most = Math.max(most, waiting.length);
      }),
    /** Answers the oldest outstanding poll. */
    give: (v: number) => waiting.shift()!.resolve(v),
    fail: (e: unknown) => waiting.shift()!.reject(e),
    shutdown: () => {
      for (const w of waiting.splice(0)) w.reject(new ShutdownError('core shut down'));
    },
    out: () => waiting.length,
    most: () => most,
  };
}

const tick = () => new Promise((r) => setImmediate(r));

test('n polls out at once; items yielded in the order they came back', async () => {
  const core = fakeCore();
  const it = pollsAtOnce(core.poll, 4);
  const got: number[] = [];
  const reading = (async () => {
    for await (const v of it) got.push(v);
  })().catch((e: unknown) => e);
  await tick();
  expect(core.out()).toBe(4);
  for (const v of [1, 2, 3]) core.give(v);
  await tick();
  // Each item taken sends a poll out again.
  expect(core.out()).toBe(4);
  for (const v of [4, 5, 6, 7]) core.give(v);
  await tick();
  expect(got).toEqual([1, 2, 3, 4, 5, 6, 7]);
  expect(core.most()).toBe(4);
  core.shutdown();
  expect(await reading).toBeInstanceOf(ShutdownError);
});

test('a shutdown while an item is out: the item is yielded, then the ShutdownError ends the stream', async () => {
  const core = fakeCore();
  const it = pollsAtOnce(core.poll, 2);
  const first = it.next();
  await tick();
  // One poll gets its item after the other was told of the shutdown.
  core.fail(new ShutdownError('core shut down'));
  core.give(7);
  expect(await first).toEqual({ value: 7, done: false });
  await expect(it.next()).rejects.toBeInstanceOf(ShutdownError);
  expect(core.out()).toBe(0);
});

test('any other error of a poll ends the stream with that error', async () => {
  const core = fakeCore();
  const it = pollsAtOnce(core.poll, 3);
  const first = it.next();
  await tick();
  core.fail(new Error('transport closed'));
  await expect(first).rejects.toThrow('transport closed');
});
