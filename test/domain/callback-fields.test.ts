import { buildPayload, fieldsForTransport } from '../../src/callbacks/payload';
import { merchantPairs } from '../../src/callbacks/transport';
import { CALLBACK_PAYLOAD_FIELDS, isReservedCallbackKey } from '../../src/domain/callback-fields';
import { callbackUrlProblems } from '../../api/validation/callback-url';
import { btcSnapshot } from '../callbacks/fixtures/payload';

/**
 * SPEC 4.9: merchant keys must not reuse callback payload field names. One list, one comparison: the
 * create validation refuses exactly the keys the transport would drop.
 */
const cases: Array<[key: string, reserved: boolean]> = [
  ['uuid', true],
  ['UUID', true],
  ['Value_Coin', true],
  ['uuid[]', true],
  ['fee[x]', true],
  ['value_coin_convert', true],
  ['pending', true],
  ['order', false],
  ['uuidx', false],
  ['my_uuid', false],
  ['token', false],
  ['values', false],
];

describe('isReservedCallbackKey', () => {
  it.each(cases)('%s → %s', (key, reserved) => {
    expect(isReservedCallbackKey(key)).toBe(reserved);
  });

  it.each(cases)('%s: create refuses it exactly when the transport drops it', (key, reserved) => {
    const raw = `order=1&${encodeURIComponent(key)}=x`;
    const refused = callbackUrlProblems(`https://shop.example/cb?${raw}`, { allowHttp: false }).some((p) => p.includes('reuse callback payload fields'));
    expect(refused).toBe(reserved);
    expect(merchantPairs(`?${raw}`)).toEqual(reserved ? ['order=1'] : ['order=1', `${encodeURIComponent(key)}=x`]);
  });
});

describe('the reserved list is the payload the gateway sends', () => {
  it.each([
    ['pending', 0],
    ['confirmed', 0],
    ['confirmed', 1],
  ] as const)('%s callback (convert=%s): every field it carries is listed', (event, convert) => {
    const names = fieldsForTransport(buildPayload(btcSnapshot, event, { convert }), 'json').map(([k]) => k);
    for (const name of names) expect(CALLBACK_PAYLOAD_FIELDS).toContain(name);
  });
});
