/**
 * `read` of each item, in the items' order, with up to `inFlight` reads under way ahead of the one handed out:
 * a node answers the next blocks while this process handles the current one. A read that fails is thrown when
 * its turn comes; those after it stay unobserved (a consumer that stops early leaves them too).
 */
export async function* readAhead<T, R>(items: readonly T[], inFlight: number, read: (item: T) => Promise<R>): AsyncGenerator<[T, R]> {
  const pending: Array<Promise<R>> = [];
  let next = 0;
  const send = () => {
    const p = read(items[next++]);
    p.catch(() => undefined);
    pending.push(p);
  };
  while (next < items.length && pending.length < Math.max(1, inFlight)) send();
  for (const item of items) {
    const result = await pending.shift()!;
    if (next < items.length) send();
    yield [item, result];
  }
}
