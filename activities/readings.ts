import type { Db } from '../src/db/client';
import { storeConfirmations, type ConfigRow, type PaymentRow } from '../src/db/queries/payments';
import { shownConfirmations } from '../src/domain/finality';
import type { ConfirmationsReading, DepositDeps } from './deposit-types';
import { toDeposit } from './forward-support';

// The deposit's confirmations, read from its node and stored for logs (the sol family reports finality 0 or 1).

/** One reading of the node, not stored (observeConfirmations); readConfirmations stores what it shows. */
async function observeConfirmations(deps: Pick<DepositDeps, 'adapter'>, payment: PaymentRow, config: ConfigRow): Promise<ConfirmationsReading> {
  const adapter = await deps.adapter(payment.network);
  const c = await adapter.confirmations(toDeposit(payment, config));
  if (c.status === 'reorged') return { status: 'reorged', confirmations: 0, observedAt: c.observedAt.toString() };
  const shown = shownConfirmations(payment.network, c.confirmations);
  return { status: c.status, confirmations: shown };
}

/** Stores the confirmations a reading shows, when they changed (a reorged reading shows none). */
async function storeShown(db: Db, payment: PaymentRow, reading: ConfirmationsReading): Promise<void> {
  if (reading.status !== 'reorged' && reading.confirmations !== payment.confirmations) {
    await storeConfirmations(db, payment.uuid, reading.confirmations);
  }
}

/** One reading of the deposit's confirmations from its node, stored when it changed what the payment shows. */
export async function readConfirmations(deps: Pick<DepositDeps, 'db' | 'adapter'>, payment: PaymentRow, config: ConfigRow): Promise<ConfirmationsReading> {
  const reading = await observeConfirmations(deps, payment, config);
  await storeShown(deps.db, payment, reading);
  return reading;
}
