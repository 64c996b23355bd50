import { eq, sql } from 'drizzle-orm';
import { createOrGetConfig } from '../../src/db/queries/configs';
import { recordDeposit } from '../../src/db/queries/payments';
import { ForwardCollisionError, NonceTakenError, discardForwardIf, nonceFloor, rivalForwards, storeForwardOnce } from '../../src/db/queries/forwards';
import { payments } from '../../src/db/schema';
import { createTestDatabase } from '../helpers/db';

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

async function twoPayments() {
  const { config } = await createOrGetConfig(
    database.db,
    {
      callbackUrl: `https://shop.example/cb?${Math.random()}`, ticker: 'eth', family: 'evm', addressOut: '0x00000000000000000000000000000000000000b2',
      notifyPending: false, notifyConfirmations: 12, post: 0, json: 0, convert: 0, priority: 'default', minimumTransactionBase: 1n,
    },
    () => source,
  );
  const deposit = async (n: number) =>
    (await recordDeposit(database.db, {
      configId: config.id, ticker: 'eth', network: 'ethereum', depositKey: `deposit:ethereum:0x${n}${Math.random()}:-1`,
      txidIn: `0x${n}`, vout: null, blockNumber: 1n, blockHash: '0xb', valueBase: 10n ** 18n,
    })).row;
  return [await deposit(1), await deposit(2)];
}

describe('forward ledger', () => {
  it('never books one txid_out for two payments', async () => {
    const [a, b] = await twoPayments();
    const at = { network: 'ethereum', source, nonce: 0 };
    expect(await storeForwardOnce(database.db, a.uuid, '{"a":1}', '0xsame', '1.00', at)).toBe(true);
    await expect(storeForwardOnce(database.db, b.uuid, '{"b":1}', '0xsame', '1.00', at)).rejects.toBeInstanceOf(ForwardCollisionError);
    const [rowB] = await database.db.select().from(payments).where(eq(payments.uuid, b.uuid));
    expect(rowB.txidOut).toBeNull();
    expect(rowB.forwardRaw).toBeNull();
    // Even a hand-written UPDATE cannot give a second payment the same txid_out.
    await expect(database.db.execute(sql`UPDATE payments SET txid_out = '0xsame' WHERE uuid = ${b.uuid}`)).rejects.toMatchObject({ cause: { constraint: 'payments_txid_out_uq' } });
    // A discarded plan's txid stays its payment's: nobody else may take it later.
    expect(await discardForwardIf(database.db, a.uuid, '0xsame')).toBe(true);
    await expect(storeForwardOnce(database.db, b.uuid, '{"b":1}', '0xsame', '1.00', at)).rejects.toBeInstanceOf(ForwardCollisionError);
  });

  it('reserves nonces per source while a stored forward holds them, and finds our rivals at a nonce', async () => {
    const [a, b] = await twoPayments();
    const other = '0x00000000000000000000000000000000000000c3';
    const before = await nonceFloor(database.db, 'ethereum', other);
    expect(before).toBe(0);
    expect(await storeForwardOnce(database.db, a.uuid, '{}', '0xa7', '1.00', { network: 'ethereum', source: other, nonce: 7 })).toBe(true);
    expect(await nonceFloor(database.db, 'ethereum', other)).toBe(8);
    expect(await nonceFloor(database.db, 'solana', other)).toBe(0);
    // A second live plan at the same nonce is refused, even without the lock (a lock lost mid-forward).
    await expect(storeForwardOnce(database.db, b.uuid, '{}', '0xb7', '1.00', { network: 'ethereum', source: other, nonce: 7 })).rejects.toBeInstanceOf(NonceTakenError);
    const [rowB] = await database.db.select().from(payments).where(eq(payments.uuid, b.uuid));
    expect(rowB.forwardRaw).toBeNull();
    // Once a plan is discarded its nonce is free, and it stays findable as the rival of the next one.
    await discardForwardIf(database.db, a.uuid, '0xa7');
    expect(await nonceFloor(database.db, 'ethereum', other)).toBe(0);
    expect(await storeForwardOnce(database.db, b.uuid, '{}', '0xb7', '1.00', { network: 'ethereum', source: other, nonce: 7 })).toBe(true);
    expect(await rivalForwards(database.db, 'ethereum', other, 7, '0xb7')).toEqual(['0xa7']);
  });
});
