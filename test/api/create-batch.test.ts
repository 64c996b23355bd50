import { eq, inArray, sql } from 'drizzle-orm';
import { CreateBatcher } from '../../api/create-batch';
import { canonicalIfValid, deriveAddressIn } from '../../src/chains/addresses';
import { HdSeed } from '../../src/chains/keys';
import type { NewPaymentConfig } from '../../src/db/queries/configs';
import * as createStatements from '../../src/db/queries/create-config';
import { createConfigs, DerivedAddressMissingError, type AddressSource, type CreateOutcome } from '../../src/db/queries/create-config';
import { openPglite } from '../../src/db/client';
import { peekNextIndex } from '../../src/db/queries/derivation';
import { publicMaterialFrom, publishPublicMaterial } from '../../src/addresses/public-material';
import { configTickers, derivedAddresses, paymentConfigs } from '../../src/db/schema';
import { allChains, merchantAddress, startApi, TEST_MNEMONIC, type TestApi } from './helpers';

/**
 * api/create-batch.ts on real PostgreSQL: creates that wait while a statement runs go together in one, and
 * each gets what it would have got alone.
 */

let api: TestApi;
let from: AddressSource & { kind: 'derived' };
const seed = HdSeed.fromMnemonic(TEST_MNEMONIC);
const OUT = merchantAddress('ethereum');
/** address_out as the route hands it on: checked and in its canonical form. */
const canonical = (address: string) => canonicalIfValid('ethereum', 'mainnet', address)!;

beforeAll(async () => {
  api = await startApi();
  const { from: source, supply } = await api.deps.addresses.depositAddresses('ethereum', 'mainnet');
  if (source.kind !== 'derived' || !supply) throw new Error('ethereum takes derived addresses');
  from = source;
  await supply.refill();
});
afterAll(() => api.close());

const input = (callbackUrl: string, over: Partial<NewPaymentConfig> = {}): NewPaymentConfig => ({
  callbackUrl,
  ticker: 'eth',
  family: 'evm',
  addressOut: OUT,
  notifyPending: false,
  notifyConfirmations: 12,
  post: 1,
  json: 1,
  convert: 0,
  priority: 'default',
  minimumTransactionBase: 1_000_000_000_000_000n,
  ...over,
});

it('creates arriving while a statement runs share the next one, each answered as if alone', async () => {
  const batcher = new CreateBatcher(api.db, { statements: 1, batch: 50 });
  const taken = await api.db.select().from(paymentConfigs);
  const knownUrl = 'https://shop.example/batch/known';
  const known = await batcher.create(input(knownUrl), from, canonical(OUT));
  expect(known.made).toBeDefined();
  const depositAddress = known.made!.addressIn;
  const before = await peekNextIndex(api.db, 'evm');

  const calls: Array<{ url: string; out: string; kind: string }> = [
    ...Array.from({ length: 30 }, (_, i) => ({ url: `https://shop.example/batch/new/${i}`, out: OUT, kind: 'new' })),
    ...Array.from({ length: 5 }, () => ({ url: 'https://shop.example/batch/twice', out: OUT, kind: 'repeat' })),
    ...Array.from({ length: 3 }, (_, i) => ({ url: `https://shop.example/batch/loop/${i}`, out: depositAddress, kind: 'loop' })),
    ...Array.from({ length: 2 }, () => ({ url: knownUrl, out: OUT, kind: 'known' })),
  ];
  const batches = jest.spyOn(createStatements, 'createConfigs');
  const singles = jest.spyOn(createStatements, 'createConfig');
  const outcomes: CreateOutcome[] = await Promise.all(calls.map((c) => batcher.create(input(c.url, { addressOut: c.out }), from, canonical(c.out))));
  // The first runs alone; the rest wait for it and go together, a repeated callback URL in the next statement
  // each time: 29 new, 3 loops and one of each repeated URL, then the repeated two, then the last three
  // repeats alone, one after the other.
  expect(batches.mock.calls.map((c) => c[1].length)).toEqual([34, 2]);
  expect(singles).toHaveBeenCalledTimes(4);
  batches.mockRestore();
  singles.mockRestore();

  const made = outcomes.filter((o) => o.made).map((o) => o.made!);
  // 30 new callbacks and one of the five repeats.
  expect(made).toHaveLength(31);
  calls.forEach((c, i) => {
    const o = outcomes[i];
    if (c.kind === 'new') expect(o).toMatchObject({ outIsDeposit: false, made: { callbackUrl: c.url } });
    if (c.kind === 'loop') expect(o).toEqual({ outIsDeposit: true, existing: undefined });
    if (c.kind === 'known') expect(o).toEqual({ outIsDeposit: false, existing: known.made });
  });
  const repeats = outcomes.filter((_, i) => calls[i].kind === 'repeat');
  expect(repeats.filter((o) => o.made)).toHaveLength(1);
  for (const o of repeats.filter((r) => !r.made)) expect(o.existing).toEqual(repeats.find((r) => r.made)!.made);

  // Each made one took its own index, its address that index's derivation, and its ticker row; the refused
  // and repeated ones took no index.
  expect(new Set(made.map((m) => m.derivationIndex)).size).toBe(31);
  for (const m of made) {
    expect(m.derivationIndex).toBeGreaterThanOrEqual(before);
    expect(m.addressIn).toBe(deriveAddressIn(seed, 'ethereum', 'mainnet', m.derivationIndex));
    const tickers = await api.db.select().from(configTickers).where(eq(configTickers.configId, m.id));
    expect(tickers.map((t) => t.ticker)).toEqual(['eth']);
  }
  expect(await peekNextIndex(api.db, 'evm')).toBe(before + 31n);
  const rows = await api.db.select().from(paymentConfigs);
  expect(rows.length - taken.length).toBe(32);
});

it('one statement answers many creates (createConfigs), in their order', async () => {
  const urls = Array.from({ length: 8 }, (_, i) => `https://shop.example/batch/direct/${i}`);
  const outcomes = await createConfigs(api.db, urls.map((u) => ({ input: input(u), outCanonical: canonical(OUT) })), from, 'evm');
  expect(outcomes.map((o) => o.made?.callbackUrl)).toEqual(urls);
  // The callback host is stored by the batch as by a single create (fee tiers and logs read it).
  const stored = await api.db.select().from(paymentConfigs).where(inArray(paymentConfigs.callbackUrl, urls));
  expect(stored.map((r) => r.callbackHost)).toEqual(urls.map(() => 'shop.example'));
  const again = await createConfigs(api.db, urls.map((u) => ({ input: input(u), outCanonical: canonical(OUT) })), from, 'evm');
  expect(again).toEqual(outcomes.map((o) => ({ outIsDeposit: false, existing: o.made })));
});

it('a batch that fails runs each create alone: each gets its own answer', async () => {
  const batcher = new CreateBatcher(api.db, { statements: 1, batch: 50 });
  const next = await peekNextIndex(api.db, 'evm');
  // The stock ends two indexes above the counter: a batch of five finds no address for its third.
  await api.db.delete(derivedAddresses).where(sql`${derivedAddresses.source} = ${from.source} AND ${derivedAddresses.derivationIndex} >= ${next + 3n}`);
  const first = batcher.create(input('https://shop.example/batch/short/first'), from, canonical(OUT));
  const rest = Array.from({ length: 5 }, (_, i) =>
    batcher.create(input(`https://shop.example/batch/short/${i}`), from, canonical(OUT)).then(
      (o) => ({ ok: o }),
      (e: unknown) => ({ error: e }),
    ),
  );
  expect((await first).made?.derivationIndex).toBe(next);
  const results = await Promise.all(rest);
  // The failed batch took five indexes (skipped, never handed out); alone, each create finds no address.
  for (const r of results) expect((r as { error: unknown }).error).toBeInstanceOf(DerivedAddressMissingError);
  const stored = await api.db.select().from(paymentConfigs).where(sql`${paymentConfigs.callbackUrl} LIKE 'https://shop.example/batch/short/%'`);
  expect(stored.map((s) => s.callbackUrl)).toEqual(['https://shop.example/batch/short/first']);
});

it('the batch statement runs on PGlite too (the embedded default)', async () => {
  const lite = await openPglite(undefined, { migrate: true });
  try {
    await publishPublicMaterial({ db: lite.db, seed, chains: allChains(), poolSize: 1 });
    const { from: source, supply } = await publicMaterialFrom(lite.db).depositAddresses('ethereum', 'mainnet');
    if (source.kind !== 'derived' || !supply) throw new Error('ethereum takes derived addresses');
    await supply.refill();
    const urls = ['https://shop.example/lite/1', 'https://shop.example/lite/2', 'https://shop.example/lite/3'];
    const outcomes = await createConfigs(lite.db, urls.map((u) => ({ input: input(u), outCanonical: canonical(OUT) })), source, 'evm');
    expect(outcomes.map((o) => [o.made?.callbackUrl, o.made?.derivationIndex])).toEqual(urls.map((u, i) => [u, BigInt(i)]));
    expect(outcomes.map((o) => o.made?.addressIn)).toEqual([0n, 1n, 2n].map((i) => deriveAddressIn(seed, 'ethereum', 'mainnet', i)));
  } finally {
    await lite.close();
  }
});
