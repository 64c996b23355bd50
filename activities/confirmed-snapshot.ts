import type { CallbackSnapshot } from '../src/callbacks/types';
import { loadPayment, storeSnapshotOnce } from '../src/db/queries/payments';
import { callbackConfirmations } from '../src/domain/finality';
import { formatUnits } from '../src/domain/money';
import type { DepositDeps } from './deposit-types';
import { baseSnapshot } from './deposit-views';
import { asset, planFromJson } from './forward-support';

/**
 * The immutable confirmed snapshot (DESIGN 5): price captured once, fee_coin = value − forwarded
 * exactly; written once, and every later call returns what was written first.
 */
export async function confirmedSnapshot(deps: Pick<DepositDeps, 'db' | 'prices'>, uuid: string): Promise<CallbackSnapshot> {
  const { db } = deps;
  const { payment, config } = await loadPayment(db, uuid);
  if (payment.snapshot) return payment.snapshot as CallbackSnapshot;
  const a = asset(payment.ticker);
  const plan = planFromJson(payment.forwardRaw!);
  const value = BigInt(payment.valueBase);
  const fee = value - plan.forwarded;
  const price = (await deps.prices.usdt(a.symbol)) ?? null;
  const snap: CallbackSnapshot = {
    ...baseSnapshot(payment, config),
    txid_out: plan.txidOut,
    confirmations: callbackConfirmations(a.network, 'confirmed', payment.confirmations),
    value_forwarded_coin: formatUnits(plan.forwarded, a.decimals),
    fee_percent: payment.feePercent,
    fee_coin: formatUnits(fee, a.decimals),
    price,
  };
  // Written now, it is this one; otherwise another run wrote first, and that one stands.
  if (await storeSnapshotOnce(db, uuid, { snapshot: snap, price, forwardedBase: plan.forwarded, feeBase: fee })) return snap;
  return (await loadPayment(db, uuid)).payment.snapshot as CallbackSnapshot;
}
