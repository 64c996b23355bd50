import { buildPayload, fieldsForTransport, isValidPrice } from '../../src/callbacks/payload';
import { btcSnapshot } from './fixtures/payload';
import { payloadCases } from './fixtures/payload';

describe('callback payload (SPEC 2.6)', () => {
  it.each(payloadCases.valid.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const fields = fieldsForTransport(buildPayload(c.snapshot, c.event, { convert: c.convert }), c.transport);
    // Exact fields, exact types, exact order.
    expect(fields).toEqual(Object.entries(c.expected));
  });

  it('value equals value_coin and value_forwarded equals value_forwarded_coin in every case', () => {
    for (const c of payloadCases.valid) {
      const f = Object.fromEntries(buildPayload(c.snapshot, c.event, { convert: c.convert }));
      expect(f.value).toBe(f.value_coin);
      expect(f.value_forwarded).toBe(f.value_forwarded_coin);
    }
  });

  it('never sends price or conversions as zero or null', () => {
    for (const price of [null, '', '0', '0.00', '-1', 'abc', '1e3']) {
      expect(isValidPrice(price)).toBe(false);
      const f = Object.fromEntries(buildPayload({ ...btcSnapshot, price }, 'confirmed', { convert: 1 }));
      expect(f).not.toHaveProperty('price');
      expect(f).not.toHaveProperty('value_coin_convert');
      expect(f).not.toHaveProperty('value_forwarded_coin_convert');
    }
  });

  it('a pending event never shows price, conversions or the forward txid, even when the snapshot has them', () => {
    const f = Object.fromEntries(buildPayload(btcSnapshot, 'pending', { convert: 1 }));
    expect(f.price).toBeUndefined();
    expect(f.value_coin_convert).toBeUndefined();
    expect(f.txid_out).toBeNull();
  });

  it('is deterministic: the same snapshot gives the same fields', () => {
    expect(buildPayload(btcSnapshot, 'confirmed', { convert: 1 })).toEqual(buildPayload(structuredClone(btcSnapshot), 'confirmed', { convert: 1 }));
  });
});
