import { eq } from 'drizzle-orm';
import { recordObserved } from '../../activities/observed';
import type { DepositInput } from '../../activities/deposit';
import { createOrGetConfig } from '../../src/db/queries/configs';
import { moveResult } from '../../src/db/queries/payments';
import { payments } from '../../src/db/schema';
import { createTestDatabase } from '../helpers/db';

/**
 * A deposit judged reorganised out and mined again (issue 55, item 3): the new lifecycle the watcher starts
 * for it finds its payment row failed, with nothing forwarded, and takes it up again, same UUID, counted
 * from its new block. A payment that forwarded anything, or did not fail, is never touched. Real PostgreSQL.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

async function deposit(txid: string): Promise<DepositInput> {
  const { config } = await createOrGetConfig(
    database.db,
    {
      callbackUrl: `https://shop.example/cb?${txid}`, ticker: 'eth', family: 'evm', addressOut: '0x00000000000000000000000000000000000000b2',
      notifyPending: false, notifyConfirmations: 12, post: 0, json: 0, convert: 0, priority: 'default', minimumTransactionBase: 1n,
    },
    () => '0x00000000000000000000000000000000000000a1',
  );
  return {
    configId: config.id, network: 'ethereum', ticker: 'eth', txid, index: -1, recipient: '0x00000000000000000000000000000000000000a1',
    amount: (10n ** 18n).toString(), blockNumber: '100', blockHash: '0xold',
  };
}

const row = async (uuid: string) => (await database.db.select().from(payments).where(eq(payments.uuid, uuid)))[0];

describe('a deposit recorded again by a new lifecycle', () => {
  it('failed as reorganised with nothing forwarded: pending again, same UUID, from its new block', async () => {
    const input = await deposit('0xreorged');
    const first = await recordObserved(database.db, input);
    expect(await moveResult(database.db, first.payment.uuid, ['pending'], 'failed', 'deposit block reorganised out before finality')).toBe(true);

    const again = await recordObserved(database.db, { ...input, blockNumber: '107', blockHash: '0xnew' });
    expect(again.payment.uuid).toBe(first.payment.uuid);
    expect(await row(first.payment.uuid)).toMatchObject({ result: 'pending', reason: null, blockNumber: 107n, blockHash: '0xnew', dueHeight: first.payment.dueHeight! + 7n });
    // Recorded once more (an activity retried): the row stays as it is.
    expect((await recordObserved(database.db, { ...input, blockNumber: '107', blockHash: '0xnew' })).payment).toMatchObject({ uuid: first.payment.uuid, result: 'pending' });
  });

  it('a payment that stored a forward, or did not fail, is never taken up again', async () => {
    const forwarded = await deposit('0xforwarded');
    const f = await recordObserved(database.db, forwarded);
    await database.db.update(payments).set({ result: 'failed', reason: 'forward 0xout failed: reverted', forwardRaw: '{}', txidOut: '0xout' }).where(eq(payments.uuid, f.payment.uuid));
    await recordObserved(database.db, { ...forwarded, blockNumber: '107', blockHash: '0xnew' });
    expect(await row(f.payment.uuid)).toMatchObject({ result: 'failed', blockHash: '0xold' });

    const done = await deposit('0xdone');
    const d = await recordObserved(database.db, done);
    await database.db.update(payments).set({ result: 'done' }).where(eq(payments.uuid, d.payment.uuid));
    await recordObserved(database.db, { ...done, blockNumber: '107', blockHash: '0xnew' });
    expect(await row(d.payment.uuid)).toMatchObject({ result: 'done', blockHash: '0xold' });
  });
});
