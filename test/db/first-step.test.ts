import { sql } from 'drizzle-orm';
import type { Pool } from 'pg';
import { recordObserved } from '../../activities/observed';
import type { DepositInput } from '../../activities/deposit';
import { volumeSince } from '../../activities/fee-inputs';
import { openPglite, type Database } from '../../src/db/client';
import { createOrGetConfig } from '../../src/db/queries/configs';
import { readDeposit } from '../../src/db/queries/first-step';
import { forwardedValueOfHost } from '../../src/db/queries/host-volume';
import { depositMinimumState, recordComputed, setPinned } from '../../src/db/queries/minimums';
import { insertDeposits, type NewDeposit } from '../../src/db/queries/payments';
import { depositKey } from '../../src/domain/deposit-key';
import { createTestDatabase } from '../helpers/db';

/**
 * A deposit's first step reads in one statement (src/db/queries/first-step.ts) what it read in five: its
 * row and configuration, the minimum its asset is held to and its callback host's forwarded value. The
 * statement answers what the separate reads answer, on PostgreSQL and on PGlite (the embedded default).
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let lite: Database;
beforeAll(async () => {
  database = await createTestDatabase();
  lite = await openPglite(undefined, { migrate: true });
});
afterAll(async () => {
  await lite?.close();
  await database?.drop();
});

const HOUR = 3600_000;

async function deposit(db: Database['db'], host: string, txid: string): Promise<DepositInput> {
  const { config } = await createOrGetConfig(
    db,
    {
      callbackUrl: `https://${host}/cb?${txid}`, ticker: 'eth', family: 'evm', addressOut: '0x00000000000000000000000000000000000000b2',
      notifyPending: false, notifyConfirmations: 12, post: 0, json: 0, convert: 0, priority: 'default', minimumTransactionBase: 1n,
    },
    () => `0x${txid.slice(2, 42).padStart(40, '0')}`,
  );
  return {
    configId: config.id, network: 'ethereum', ticker: 'eth', txid, index: -1, recipient: config.addressIn,
    amount: (10n ** 17n).toString(), blockNumber: '100', blockHash: '0xb100',
  };
}

/** A forwarded payment of `host` created `hoursAgo`: counted by the host's volume (from its hours, or from the payments of the first hour). */
async function forwarded(db: Database['db'], host: string, key: string, hoursAgo: number, value: bigint, price: string): Promise<void> {
  const d = await deposit(db, host, `0x${key.padStart(64, '0')}`);
  await db.execute(sql`
    INSERT INTO payments (config_id, ticker, network, deposit_key, txid_in, value_base, result, price, created_at)
    VALUES (${d.configId}, 'eth', 'ethereum', ${key}, ${d.txid}, ${value.toString()}, 'done', ${price}, now() - make_interval(secs => ${hoursAgo * 3600}))`);
}

const asNew = (d: DepositInput): NewDeposit => ({
  configId: d.configId, ticker: d.ticker, network: d.network, depositKey: depositKey(d), txidIn: d.txid, vout: null,
  blockNumber: BigInt(d.blockNumber), blockHash: d.blockHash, valueBase: BigInt(d.amount),
});

describe.each([
  ['PostgreSQL', () => database],
  ['PGlite', () => lite],
])('the first step read on %s', (_name, get) => {
  it('answers the row, its configuration, the minimum state and the host volume the separate reads answer', async () => {
    const { db } = get();
    const host = `shop-${_name.toLowerCase()}.example`;
    await forwarded(db, host, `a-${_name}`, 2, 10n ** 18n, '3000');
    await forwarded(db, host, `b-${_name}`, 24 * 40, 10n ** 18n, '3000'); // older than the window
    await forwarded(db, `other-${host}`, `c-${_name}`, 1, 10n ** 18n, '3000');
    await recordComputed(db, 'eth', 5n * 10n ** 15n, HOUR);
    await setPinned(db, 'eth', 9n * 10n ** 15n, HOUR); // raised: the computed figure stays honoured
    const input = await deposit(db, host, `0x${'1'.repeat(60)}${_name.length.toString().padStart(4, '0')}`);

    expect(await readDeposit(db, depositKey(input), volumeSince())).toBeUndefined();
    const read = await recordObserved(db, input);
    expect(read.payment).toMatchObject({ depositKey: depositKey(input), configId: input.configId, result: 'pending', valueBase: input.amount });
    expect(read.config).toMatchObject({ id: input.configId, callbackHost: host });
    const separate = await depositMinimumState(db, 'eth');
    expect({ ...read.minimum, ageMs: 0 }).toEqual({ ...separate, ageMs: 0 });
    expect(separate!.ageMs! - read.minimum!.ageMs!).toBeGreaterThanOrEqual(0);
    expect(read.minimum).toMatchObject({ pinned: 9n * 10n ** 15n, honoured: 5n * 10n ** 15n });
    expect(read.volume).toEqual(await forwardedValueOfHost(db, host, volumeSince()));
    expect(read.volume.map((v) => [v.ticker, Number(v.valueTimesPrice)])).toEqual([['eth', 3000 * 1e18]]);
  });

  it('reads an asset without a minimum row as none, and a host without forwards as no volume', async () => {
    const { db } = get();
    const input = { ...(await deposit(db, `new-${_name.toLowerCase()}.example`, `0x${'2'.repeat(60)}${_name.length.toString().padStart(4, '0')}`)), ticker: 'erc20_usdt' };
    const read = await recordObserved(db, input);
    expect(read.minimum).toBeUndefined();
    expect(read.volume).toEqual([]);
  });
});

it('a deposit the watcher recorded costs its first step one statement', async () => {
  const input = await deposit(database.db, 'one.example', `0x${'3'.repeat(64)}`);
  expect(await insertDeposits(database.db, [asNew(input)])).toEqual(['eth']);
  const pool = (database.db as unknown as { $client: Pool }).$client;
  const query = jest.spyOn(pool, 'query');
  try {
    const read = await recordObserved(database.db, input);
    expect(read.payment.depositKey).toBe(depositKey(input));
    expect(query).toHaveBeenCalledTimes(1);
  } finally {
    query.mockRestore();
  }
});
