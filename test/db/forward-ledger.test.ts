import { eq, sql } from 'drizzle-orm';
import { createOrGetConfig } from '../../src/db/queries/configs';
import { recordDeposit } from '../../src/db/queries/payments';
import { ForwardCollisionError, NonceTakenError, discardForwardIf, nonceFloor, rivalForwards, storeForwardOnce } from '../../src/db/queries/forwards';
import { forwardTxs, payments } from '../../src/db/schema';
import { rowsOf } from '../../src/db/prepared';
import { createTestDatabase } from '../helpers/db';
import { openPglite } from '../../src/db/client';

/**
 * The ledger of signed forwards on real PostgreSQL: one txid_out belongs to one payment (a collision is
 * an error before anything is written, and the unique index refuses it even to a raw UPDATE); an EVM
 * source's nonces are reserved while a stored forward holds them; our own rivals at a nonce are found.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
const source = '0x00000000000000000000000000000000000000a1';

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

async function twoPayments(db = database.db) {
  const { config } = await createOrGetConfig(
    db,
    {
      callbackUrl: `https://shop.example/cb?${Math.random()}`, ticker: 'eth', family: 'evm', addressOut: '0x00000000000000000000000000000000000000b2',
      notifyPending: false, notifyConfirmations: 12, post: 0, json: 0, convert: 0, priority: 'default', minimumTransactionBase: 1n,
    },
    () => source,
  );
  const deposit = async (n: number) =>
    (await recordDeposit(db, {
      configId: config.id, ticker: 'eth', network: 'ethereum', depositKey: `deposit:ethereum:0x${n}${Math.random()}:-1`,
      txidIn: `0x${n}`, vout: null, blockNumber: 1n, blockHash: '0xb', valueBase: 10n ** 18n,
    })).row;
  return [await deposit(1), await deposit(2)];
}

describe('forward ledger', () => {
  it('never books one txid_out for two payments', async () => {
    const [a, b] = await twoPayments();
    const at = { network: 'ethereum', source, nonce: 0 };
    expect(await storeForwardOnce(database.db, a.uuid, '{"a":1}', '0xsame', at)).toBe(true);
    await expect(storeForwardOnce(database.db, b.uuid, '{"b":1}', '0xsame', at)).rejects.toBeInstanceOf(ForwardCollisionError);
    const [rowB] = await database.db.select().from(payments).where(eq(payments.uuid, b.uuid));
    expect(rowB.txidOut).toBeNull();
    expect(rowB.forwardRaw).toBeNull();
    // Even a hand-written UPDATE cannot give a second payment the same txid_out.
    await expect(database.db.execute(sql`UPDATE payments SET txid_out = '0xsame' WHERE uuid = ${b.uuid}`)).rejects.toMatchObject({ cause: { constraint: 'payments_txid_out_uq' } });
    // A discarded plan's txid stays its payment's: nobody else may take it later.
    expect(await discardForwardIf(database.db, a.uuid, '0xsame')).toBe(true);
    await expect(storeForwardOnce(database.db, b.uuid, '{"b":1}', '0xsame', at)).rejects.toBeInstanceOf(ForwardCollisionError);
  });

  it('books a txid raced by two payments once, and stores one of two plans raced for one payment', async () => {
    for (let i = 0; i < 10; i++) {
      const [a, b] = await twoPayments();
      const txid = `0xrace${i}${Math.random()}`;
      const outcomes = await Promise.allSettled([
        storeForwardOnce(database.db, a.uuid, '{"a":1}', txid, { network: 'ethereum', source, nonce: 100 + i }),
        storeForwardOnce(database.db, b.uuid, '{"b":1}', txid, { network: 'ethereum', source: `${source}b`, nonce: 100 + i }),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled' && o.value === true)).toHaveLength(1);
      const refused = outcomes.filter((o) => o.status === 'rejected');
      expect(refused).toHaveLength(1);
      expect((refused[0] as PromiseRejectedResult).reason).toBeInstanceOf(ForwardCollisionError);
      const rows = await database.db.select().from(payments).where(sql`${payments.uuid} IN (${a.uuid}, ${b.uuid})`);
      expect(rows.filter((r) => r.txidOut === txid && r.forwardRaw !== null)).toHaveLength(1);
      expect(rows.filter((r) => r.txidOut === null && r.forwardRaw === null)).toHaveLength(1);
      const ledger = await database.db.select().from(forwardTxs).where(eq(forwardTxs.txid, txid));
      expect(ledger).toHaveLength(1);
      expect(rows.find((r) => r.txidOut === txid)?.uuid).toBe(ledger[0].paymentUuid);
    }
    const [c] = await twoPayments();
    const both = await Promise.all([
      storeForwardOnce(database.db, c.uuid, '{"c":1}', `0xc1${Math.random()}`, { network: 'ethereum', source: `${source}c`, nonce: 1 }, 30_000),
      storeForwardOnce(database.db, c.uuid, '{"c":2}', `0xc2${Math.random()}`, { network: 'ethereum', source: `${source}c`, nonce: 2 }, 30_000),
    ]);
    expect(both.sort()).toEqual([false, true]);
    const [rowC] = await database.db.select().from(payments).where(eq(payments.uuid, c.uuid));
    expect(['{"c":1}', '{"c":2}']).toContain(rowC.forwardRaw);
    // Only the stored plan's txid is on record; its watch window is the database's now + 30 s.
    expect(await database.db.select().from(forwardTxs).where(eq(forwardTxs.paymentUuid, c.uuid))).toEqual([expect.objectContaining({ txid: rowC.txidOut })]);
    const [{ left }] = rowsOf<{ left: number }>(await database.db.execute(sql`SELECT extract(epoch FROM forward_watch_until - now())::float AS left FROM payments WHERE uuid = ${c.uuid}`));
    expect(left).toBeGreaterThan(20);
    expect(left).toBeLessThanOrEqual(30);
    // Its own txid stored again after a discard is its own: stored, not a collision.
    expect(await discardForwardIf(database.db, c.uuid, rowC.txidOut!)).toBe(true);
    expect(await storeForwardOnce(database.db, c.uuid, rowC.forwardRaw!, rowC.txidOut!, { network: 'ethereum', source: `${source}c`, nonce: 3 })).toBe(true);
    const [again] = await database.db.select().from(payments).where(eq(payments.uuid, c.uuid));
    expect(again.txidOut).toBe(rowC.txidOut);
    expect(again.forwardWatchUntil).toBeNull();
  });

  it('stores once on PGlite too (the embedded default): stored, refused to another payment, false when stored already', async () => {
    const lite = await openPglite(undefined, { migrate: true });
    try {
      const [a, b] = await twoPayments(lite.db);
      const at = { network: 'ethereum', source, nonce: 0 };
      expect(await storeForwardOnce(lite.db, a.uuid, '{"a":1}', '0xlite', at, 5000)).toBe(true);
      expect(await storeForwardOnce(lite.db, a.uuid, '{"a":2}', '0xlite2', { ...at, nonce: 1 })).toBe(false);
      await expect(storeForwardOnce(lite.db, b.uuid, '{"b":1}', '0xlite', { ...at, nonce: 2 })).rejects.toBeInstanceOf(ForwardCollisionError);
      await expect(storeForwardOnce(lite.db, b.uuid, '{"b":1}', '0xlite3', at)).rejects.toBeInstanceOf(NonceTakenError);
      const rows = await lite.db.select().from(payments);
      expect(rows.find((r) => r.uuid === a.uuid)).toMatchObject({ txidOut: '0xlite', forwardRaw: '{"a":1}' });
      expect(rows.find((r) => r.uuid === a.uuid)?.forwardWatchUntil).toBeInstanceOf(Date);
      expect(rows.find((r) => r.uuid === b.uuid)).toMatchObject({ txidOut: null, forwardRaw: null });
      expect((await lite.db.select().from(forwardTxs)).map((r) => r.txid)).toEqual(['0xlite']);
    } finally {
      await lite.close();
    }
  });

  it('reserves nonces per source while a stored forward holds them, and finds our rivals at a nonce', async () => {
    const [a, b] = await twoPayments();
    const other = '0x00000000000000000000000000000000000000c3';
    const before = await nonceFloor(database.db, 'ethereum', other);
    expect(before).toBe(0);
    expect(await storeForwardOnce(database.db, a.uuid, '{}', '0xa7', { network: 'ethereum', source: other, nonce: 7 })).toBe(true);
    expect(await nonceFloor(database.db, 'ethereum', other)).toBe(8);
    expect(await nonceFloor(database.db, 'solana', other)).toBe(0);
    // A second live plan at the same nonce is refused, even without the lock (a lock lost mid-forward).
    await expect(storeForwardOnce(database.db, b.uuid, '{}', '0xb7', { network: 'ethereum', source: other, nonce: 7 })).rejects.toBeInstanceOf(NonceTakenError);
    const [rowB] = await database.db.select().from(payments).where(eq(payments.uuid, b.uuid));
    expect(rowB.forwardRaw).toBeNull();
    // Once a plan is discarded its nonce is free, and it stays findable as the rival of the next one.
    await discardForwardIf(database.db, a.uuid, '0xa7');
    expect(await nonceFloor(database.db, 'ethereum', other)).toBe(0);
    expect(await storeForwardOnce(database.db, b.uuid, '{}', '0xb7', { network: 'ethereum', source: other, nonce: 7 })).toBe(true);
    expect(await rivalForwards(database.db, 'ethereum', other, 7, '0xb7')).toEqual(['0xa7']);
  });
});
