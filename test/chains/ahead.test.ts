import { readAhead } from '../../src/chains/ahead';

/** A read that ends when the test says so, so that the order of ends differs from the order of the items. */
function controlled() {
  const started: number[] = [];
  const ends = new Map<number, { resolve: (v: string) => void; reject: (e: Error) => void }>();
  const read = (n: number) =>
    new Promise<string>((resolve, reject) => {
      started.push(n);
      ends.set(n, { resolve, reject });
    });
  return { started, ends, read };
}

const tick = () => new Promise((r) => setImmediate(r));

it('hands the results on in the items’ order, with at most inFlight reads under way', async () => {
  const c = controlled();
  const out: Array<[number, string]> = [];
  const done = (async () => {
    for await (const pair of readAhead([1, 2, 3, 4, 5], 2, c.read)) out.push(pair);
  })();
  await tick();
  expect(c.started).toEqual([1, 2]);
  c.ends.get(2)!.resolve('b'); // ends before 1: held until 1 is handed on
  await tick();
  expect(out).toEqual([]);
  expect(c.started).toEqual([1, 2]);
  c.ends.get(1)!.resolve('a');
  await tick();
  expect(out.map(([n]) => n)).toEqual([1, 2]);
  expect(c.started).toEqual([1, 2, 3, 4]);
  for (const n of [3, 4]) c.ends.get(n)!.resolve(String(n));
  await tick();
  c.ends.get(5)!.resolve('5');
  await done;
  expect(out).toEqual([[1, 'a'], [2, 'b'], [3, '3'], [4, '4'], [5, '5']]);
});

it('a failed read is thrown at its turn, after what came before it; no result after it is handed on', async () => {
  const c = controlled();
  const out: number[] = [];
  const done = (async () => {
    for await (const [n] of readAhead([1, 2, 3], 3, c.read)) out.push(n);
  })();
  await tick();
  c.ends.get(3)!.resolve('c');
  c.ends.get(2)!.reject(new Error('block 2 not available'));
  c.ends.get(1)!.resolve('a');
  await expect(done).rejects.toThrow('block 2 not available');
  expect(out).toEqual([1]);
});
