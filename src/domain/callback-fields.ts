/**
 * Field names of the merchant callback payload (SPEC 2.6). A merchant's own callback query key must not
 * reuse one (SPEC 4.9): the receiver could not tell the merchant's value from the gateway's.
 */
export const CALLBACK_PAYLOAD_FIELDS = [
  'uuid',
  'address_in',
  'address_out',
  'txid_in',
  'vout',
  'txid_out',
  'confirmations',
  'value',
  'value_coin',
  'value_forwarded',
  'value_forwarded_coin',
  'fee',
  'fee_coin',
  'price',
  'coin',
  'result',
  'pending',
  'value_coin_convert',
  'value_forwarded_coin_convert',
] as const;

export type CallbackPayloadField = (typeof CALLBACK_PAYLOAD_FIELDS)[number];

const RESERVED = new Set<string>(CALLBACK_PAYLOAD_FIELDS);

/**
 * Whether a (decoded) merchant query key collides with a payload field. Compared case-insensitively and
 * with a PHP-style `[...]` suffix removed, because common receivers read `UUID`, `uuid[]` and `uuid` alike.
 */
export function isReservedCallbackKey(key: string): boolean {
  return RESERVED.has(key.replace(/\[.*$/, '').toLowerCase());
}
