import type { CallbackSnapshot } from '../src/callbacks/types';
import type { ConfigRow, PaymentRow } from '../src/db/queries/payments';
import { NETWORKS } from '../src/domain/assets';
import { callbackHost } from '../src/domain/callback-host';
import { requiredConfirmations } from '../src/domain/finality';
import { formatUnits } from '../src/domain/money';
import type { PaymentInfo } from './deposit-types';
import { asset } from './forward-support';

// What a payment's stored rows show the workflow (PaymentInfo) and a callback (its snapshot before a forward).

/** The payment as its workflow sees it. */
export function paymentInfo(payment: PaymentRow, config: ConfigRow): PaymentInfo {
  const a = asset(payment.ticker);
  return {
    uuid: payment.uuid,
    ticker: payment.ticker,
    network: payment.network,
    notifyPending: config.notifyPending,
    requiredConfirmations: requiredConfirmations(a.network, config.notifyConfirmations),
    callbackHost: callbackHost(config.callbackUrl),
    txidIn: payment.txidIn ?? '',
    result: payment.result,
    txidOut: payment.txidOut,
  };
}

/** A callback's snapshot of the deposit alone: nothing forwarded, no fee, no price yet. */
export function baseSnapshot(payment: PaymentRow, config: ConfigRow): CallbackSnapshot {
  const a = asset(payment.ticker);
  const utxo = NETWORKS[a.network].family === 'utxo';
  return {
    uuid: payment.uuid,
    coin: payment.ticker,
    address_in: config.addressIn,
    address_out: config.addressOut,
    txid_in: payment.txidIn ?? '',
    vout: utxo ? payment.vout : null,
    txid_out: null,
    confirmations: payment.confirmations,
    value_coin: formatUnits(BigInt(payment.valueBase), a.decimals),
    value_forwarded_coin: formatUnits(0n, a.decimals),
    fee_percent: '0.00',
    fee_coin: formatUnits(0n, a.decimals),
    price: null,
  };
}
