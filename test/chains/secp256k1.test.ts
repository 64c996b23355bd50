import { randomBytes } from 'node:crypto';
import * as tiny from 'tiny-secp256k1';
import { addTweakTimesG, nativeSecp256k1, pointCompress, publicDerivationEcc } from '../../src/chains/secp256k1';

/** The API's public derivation arithmetic (native addon when it loads) answers exactly as tiny-secp256k1. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const scalar = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');

describe('secp256k1 for public derivation', () => {
  it('the native addon loads on this machine', () => {
    expect(nativeSecp256k1).toBe(true);
  });

  it('tweak-add and re-encoding agree with tiny-secp256k1 on random points, both encodings', () => {
    for (let i = 0; i < 200; i++) {
      const p = tiny.pointFromScalar(randomBytes(32), i % 2 === 0)!;
      const t = randomBytes(32);
      for (const compressed of [true, false]) {
        expect(Buffer.from(publicDerivationEcc.pointAddScalar(p, t, compressed)!)).toEqual(Buffer.from(tiny.pointAddScalar(p, t, compressed)!));
        expect(Buffer.from(pointCompress(p, compressed))).toEqual(Buffer.from(tiny.pointCompress(p, compressed)));
      }
    }
  });

  it('isPoint agrees with tiny-secp256k1 on valid keys, x off the curve, x at or above the field size, and other encodings', () => {
    const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;
    const cases: Uint8Array[] = [];
    for (let i = 0; i < 100; i++) {
      const p = tiny.pointFromScalar(randomBytes(32), true)!;
      cases.push(p, tiny.pointCompress(p, false));
      const x = Buffer.from(p);
      x[32] ^= 1; // about half of these x have no point
      cases.push(x);
    }
    for (const x of [P, P + 1n, 0n]) for (const prefix of [2, 3]) cases.push(Buffer.concat([Buffer.from([prefix]), scalar(x)]));
    const hybrid = Buffer.from(tiny.pointCompress(tiny.pointFromScalar(scalar(7n), true)!, false));
    hybrid[0] = 6 + (hybrid[64] & 1);
    cases.push(hybrid, Buffer.alloc(33), Buffer.alloc(32, 1));
    const answers = cases.map((c) => [Buffer.from(c).toString('hex'), publicDerivationEcc.isPoint(c)]);
    expect(answers).toEqual(cases.map((c) => [Buffer.from(c).toString('hex'), tiny.isPoint(c)]));
    expect(answers.filter(([, ok]) => ok).length).toBeGreaterThan(200);
    expect(answers.filter(([, ok]) => !ok).length).toBeGreaterThan(10);
  });

  it('a sum at infinity is null and a tweak at or above the order throws, as in tiny-secp256k1', () => {
    const k = 12345n;
    const p = tiny.pointFromScalar(scalar(k), true)!;
    expect(tiny.pointAddScalar(p, scalar(N - k))).toBeNull();
    expect(publicDerivationEcc.pointAddScalar(p, scalar(N - k))).toBeNull();
    expect(() => tiny.pointAddScalar(p, scalar(N))).toThrow();
    expect(() => publicDerivationEcc.pointAddScalar(p, scalar(N))).toThrow();
  });

  it('addTweakTimesG: P + t·G as tiny-secp256k1\'s tweak-add, both encodings; null at infinity; a bad tweak or P throws', () => {
    for (let i = 0; i < 200; i++) {
      const p = tiny.pointFromScalar(randomBytes(32), false)!;
      const t = randomBytes(32);
      for (const compressed of [true, false]) {
        expect(Buffer.from(addTweakTimesG(p, t, compressed)!)).toEqual(Buffer.from(tiny.pointAddScalar(p, t, compressed)!));
      }
    }
    const k = 4242n;
    const p = tiny.pointFromScalar(scalar(k), false)!;
    expect(addTweakTimesG(p, scalar(N - k), true)).toBeNull();
    expect(() => addTweakTimesG(p, scalar(N), true)).toThrow();
    expect(() => addTweakTimesG(p, scalar(0n), true)).toThrow();
    const offCurve = Buffer.from(p);
    offCurve[64] ^= 1;
    expect(() => addTweakTimesG(offCurve, scalar(7n), true)).toThrow();
  });
});
