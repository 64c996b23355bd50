import Decimal from 'decimal.js';
import { sql } from 'drizzle-orm';
import { rollingVolumeUsdt } from '../../activities/fee-inputs';
import { createOrGetConfig } from '../../src/db/queries/configs';
import { recordDeposit } from '../../src/db/queries/payments';
import { payments } from '../../src/db/schema';
import { queryRows } from '../api/helpers';
import { createTestDatabase } from '../helpers/db';

/**
 * A forward's fee tier counts its callback host's forwarded volume of the last 30 days (SPEC fees). On
 * real PostgreSQL: the sum is exact and counts only that host (any case, with or without userinfo or
 * port), only sent and done payments with a valid price, only the last 30 days; and the host's
 * configurations are found by their expression index, so the cost does not grow with all merchants' volume.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let n = 0;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

async function paid(callbackUrl: string, ticker: 'eth' | 'erc20_usdt', valueBase: bigint, price: string | null, result: string, daysAgo = 0) {
  const { config } = await createOrGetConfig(
    database.db,
    {
      callbackUrl, ticker, family: 'evm', addressOut: '0x00000000000000000000000000000000000000b2',
      notifyPending: false, notifyConfirmations: 12, post: 0, json: 0, convert: 0, priority: 'default', minimumTransactionBase: 1n,
    },
    () => `0x${(++n).toString(16).padStart(40, '0')}`,
  );
  const { row: p } = await recordDeposit(database.db, {
    configId: config.id, ticker, network: 'ethereum', depositKey: `deposit:ethereum:0x${++n}:-1`,
    txidIn: `0x${n}`, vout: null, blockNumber: 1n, blockHash: '0xb', valueBase,
  });
  await database.db.execute(
    sql`UPDATE ${payments} SET result = ${result}, price = ${price}, created_at = now() - make_interval(days => ${daysAgo}) WHERE uuid = ${p.uuid}`,
  );
}

it('sums the host\'s sent and done payments of the last 30 days at their prices, exactly', async () => {
  const host = 'Shop.Volume.example';
  await paid(`https://shop.volume.example/a`, 'eth', 1_234_567_890_123_456_789n, '3012.45', 'done');
  await paid(`https://user:pw@SHOP.volume.example:8443/b?x=1`, 'eth', 10n ** 18n, '2999.99', 'sent');
  await paid(`https://shop.volume.example/c`, 'erc20_usdt', 123_456_789n, '1', 'done');
  // Not counted: another host, pending/processing/failed, no or an invalid price, older than 30 days.
  await paid(`https://other.example/d`, 'eth', 10n ** 20n, '3000', 'done');
  await paid(`https://shop.volume.example.evil.example/e`, 'eth', 10n ** 20n, '3000', 'done');
  await paid(`https://shop.volume.example/f`, 'eth', 10n ** 20n, '3000', 'processing');
  await paid(`https://shop.volume.example/g`, 'eth', 10n ** 20n, '3000', 'failed');
  await paid(`https://shop.volume.example/h`, 'eth', 10n ** 20n, null, 'done');
  await paid(`https://shop.volume.example/i`, 'eth', 10n ** 20n, 'n/a', 'done');
  await paid(`https://shop.volume.example/j`, 'eth', 10n ** 20n, '3000', 'done', 31);

  const expected = new Decimal('1.234567890123456789')
    .mul('3012.45')
    .plus(new Decimal('1').mul('2999.99'))
    .plus(new Decimal('123.456789'))
    .toFixed(2, Decimal.ROUND_DOWN);
  expect(expected).toBe('6842.52'); // 6842.52082960240740402305
  expect(await rollingVolumeUsdt(database.db, host)).toBe(expected);
  expect(await rollingVolumeUsdt(database.db, 'nobody.example')).toBe('0.00');
});

it('finds the host\'s configurations by the callback host index', async () => {
  await database.db.execute(sql`ANALYZE payment_configs`);
  const plan = await database.db.transaction(async (tx) => {
    await tx.execute(sql`SET LOCAL enable_seqscan = off`);
    const rows = await queryRows<{ 'QUERY PLAN': string }>(
      tx as never,
      sql`EXPLAIN SELECT id FROM payment_configs WHERE callback_host = 'shop.volume.example'`,
    );
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
  expect(plan).toMatch(/payment_configs_callback_host_idx/);
});
