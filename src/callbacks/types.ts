/**
 * The immutable facts one merchant callback is built from (SPEC 2.6). Amounts are decimal strings already
 * printed with the asset's precision (src/domain/money.ts formatUnits). The deposit lifecycle builds one
 * per stage; the payload builder decides which fields each event and transport shows, so a pending
 * snapshot may carry zeros (or anything) in the confirmed-only fields: they are overridden.
 */
export interface CallbackSnapshot {
  uuid: string;
  /** Canonical ticker (src/domain/assets.ts). */
  coin: string;
  address_in: string;
  address_out: string;
  /** Bare transaction hash (no `:vout` suffix for UTXO). */
  txid_in: string;
  /** Output index of a UTXO deposit; ignored for other families. */
  vout: number | null;
  /** Forward transaction hash; ignored for the pending event. */
  txid_out: string | null;
  /** Incoming confirmations; the sol family is forced to 0 (pending) / 1 (confirmed). */
  confirmations: number;
  value_coin: string;
  value_forwarded_coin: string;
  /** Actual percentage applied, e.g. "1.00". */
  fee_percent: string;
  fee_coin: string;
  /** Confirmed-time USDT price of one coin, captured once; null when unavailable. */
  price: string | null;
}

export type CallbackEvent = 'pending' | 'confirmed';

/** How the merchant asked to be called (SPEC 4.6 post/json); the GET transport is the default. */
export type Transport = 'get' | 'form' | 'json';

/** The immutable parts of a payment configuration that shape delivery. */
export interface CallbackTarget {
  url: string;
  post: number;
  json: number;
  convert: number;
}

export function transportOf(target: Pick<CallbackTarget, 'post' | 'json'>): Transport {
  if (target.post !== 1) return 'get';
  return target.json === 1 ? 'json' : 'form';
}

/** One payload field in wire order; JSON keeps numbers and null, GET/form print strings. */
export type PayloadValue = string | number | null;
export type PayloadFields = Array<[string, PayloadValue]>;
