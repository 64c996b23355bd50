import Decimal from 'decimal.js';
import { findAsset, networkOf } from '../domain/assets';
import { callbackConfirmations } from '../domain/finality';
import { formatUnits } from '../domain/money';
import type { CallbackEvent, CallbackSnapshot, PayloadFields, Transport } from './types';

const DECIMAL = /^\d+(\.\d+)?$/;

/** A price the gateway may show: a positive decimal. Anything else means "unavailable" and is omitted. */
export function isValidPrice(price: string | null | undefined): price is string {
  return typeof price === 'string' && DECIMAL.test(price) && new Decimal(price).gt(0);
}

/** USDT value of an amount at the snapshot price, two places, rounded down (never overstates). */
export function usdtValue(amount: string, price: string): string {
  return new Decimal(amount).mul(new Decimal(price)).toFixed(2, Decimal.ROUND_DOWN);
}

function assetFacts(snapshot: CallbackSnapshot): { decimals: number; family: string | undefined; network: string | undefined } {
  const asset = findAsset(snapshot.coin);
  if (asset) return { decimals: asset.decimals, family: networkOf(asset).family, network: asset.network };
  // Unknown ticker: fall back to the precision the amount was printed with.
  return { decimals: (snapshot.value_coin.split('.')[1] ?? '').length, family: undefined, network: undefined };
}

/**
 * The fields of SPEC 2.6 for one event, typed as JSON sends them and in the table's order. Pure and
 * deterministic: the same snapshot gives the same fields, so every retry sends the same body bytes.
 */
export function buildPayload(snapshot: CallbackSnapshot, event: CallbackEvent, opts: { convert: number }): PayloadFields {
  const { decimals, family, network } = assetFacts(snapshot);
  const confirmed = event === 'confirmed';
  const zero = formatUnits(0n, decimals);
  const confirmations = callbackConfirmations(network, event, snapshot.confirmations);
  const forwarded = confirmed ? snapshot.value_forwarded_coin : zero;
  const fields: PayloadFields = [
    ['uuid', snapshot.uuid],
    ['address_in', snapshot.address_in],
    ['address_out', snapshot.address_out],
    ['txid_in', snapshot.txid_in],
  ];
  const hasVout = (family === 'utxo' || family === undefined) && Number.isInteger(snapshot.vout) && (snapshot.vout as number) >= 0;
  if (hasVout) fields.push(['vout', snapshot.vout as number]);
  fields.push(
    ['txid_out', confirmed ? snapshot.txid_out : null],
    ['confirmations', confirmations],
    ['value', snapshot.value_coin],
    ['value_coin', snapshot.value_coin],
    ['value_forwarded', forwarded],
    ['value_forwarded_coin', forwarded],
    ['fee', confirmed ? snapshot.fee_percent : '0.00'],
    ['fee_coin', confirmed ? snapshot.fee_coin : zero],
  );
  const price = confirmed && isValidPrice(snapshot.price) ? snapshot.price : undefined;
  if (price !== undefined) fields.push(['price', price]);
  fields.push(['coin', snapshot.coin], ['result', confirmed ? 'sent' : 'pending'], ['pending', confirmed ? 0 : 1]);
  if (price !== undefined && opts.convert === 1) {
    fields.push(
      ['value_coin_convert', JSON.stringify({ USDT: usdtValue(snapshot.value_coin, price) })],
      ['value_forwarded_coin_convert', JSON.stringify({ USDT: usdtValue(snapshot.value_forwarded_coin, price) })],
    );
  }
  return fields;
}

/**
 * The fields as a transport carries them: JSON keeps the types; GET and form print every scalar as a
 * string and leave out nulls (the pending txid_out).
 */
export function fieldsForTransport(fields: PayloadFields, transport: Transport): PayloadFields {
  if (transport === 'json') return fields;
  return fields.filter(([, v]) => v !== null).map(([k, v]) => [k, String(v)]);
}
