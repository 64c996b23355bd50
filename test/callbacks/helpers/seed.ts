import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../../../src/db/client';
import { deliveryAttempts, paymentConfigs, payments } from '../../../src/db/schema';
import type { CallbackSnapshot } from '../../../src/callbacks/types';
import { btcSnapshot } from '../fixtures/payload';
import { callbackColumns } from '../../helpers/callback-columns';

/** Seeds one payment configuration and one payment directly, as the API and the watcher would. */
export async function seedPayment(
  db: Db,
  opts: { callbackUrl: string; post?: number; json?: number; convert?: number; result?: string; snapshot?: CallbackSnapshot },
): Promise<{ uuid: string; snapshot: CallbackSnapshot }> {
  const base = opts.snapshot ?? btcSnapshot;
  // A URL that does not parse has no key or host: no create stores one, and delivery must still refuse it.
  const callback = URL.canParse(opts.callbackUrl) ? callbackColumns(opts.callbackUrl) : { callbackUrl: opts.callbackUrl, callbackKey: opts.callbackUrl, callbackHost: '' };
  const [config] = await db
    .insert(paymentConfigs)
    .values({
      ...callback, ticker: 'btc', family: 'btc', addressIn: base.address_in, addressOut: base.address_out,
      derivationIndex: 0n, notifyPending: true, notifyConfirmations: 2, post: opts.post ?? 1, json: opts.json ?? 1, convert: opts.convert ?? 1,
      priority: 'default',
    })
    .returning({ id: paymentConfigs.id });
  const uuid = randomUUID();
  await db.insert(payments).values({
    uuid, configId: config.id, ticker: 'btc', network: 'bitcoin', depositKey: `deposit:bitcoin:${uuid}:0`, txidIn: base.txid_in,
    vout: base.vout, valueBase: '1000000', result: opts.result ?? 'sent',
  });
  return { uuid, snapshot: { ...base, uuid } };
}

export async function attemptsOf(db: Db, uuid: string) {
  const rows = await db.select().from(deliveryAttempts).where(eq(deliveryAttempts.paymentUuid, uuid));
  return rows.sort((a, b) => (a.stage === b.stage ? a.attempt - b.attempt : a.stage < b.stage ? 1 : -1));
}

export async function paymentOf(db: Db, uuid: string) {
  const [row] = await db.select().from(payments).where(eq(payments.uuid, uuid));
  return row;
}
