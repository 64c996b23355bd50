import { ASSETS } from '../../src/domain/assets';
import { chooseFeePercent, computeFees, type FeePolicy } from '../../src/domain/fees';
import { convertUnits, formatUnits, parseUnits, percentOf } from '../../src/domain/money';

const policy: FeePolicy = {
  domainOverrides: { 'vip.example': '0.25' },
  tiers: [
    { fromUsdt: '0', feePercent: '1.00' },
    { fromUsdt: '10000', feePercent: '0.80' },
    { fromUsdt: '100000', feePercent: '0.60' },
  ],
};

describe('fee percentage choice', () => {
  it.each([
    ['vip.example', '999999999', '0.25'],
    ['VIP.example', undefined, '0.25'],
    ['shop.example', '0', '1.00'],
    ['shop.example', '9999.99', '1.00'],
    ['shop.example', '10000', '0.80'],
    ['shop.example', '250000.5', '0.60'],
    ['shop.example', undefined, '1.50'],
  ])('%s with volume %s → %s', (host, volume, expected) => {
    expect(chooseFeePercent({ policy, callbackHost: host, rollingVolumeUsdt: volume, assetDefault: '1.50' })).toBe(expected);
  });
});

describe('fee computation', () => {
  it('native coin: commission + miner fee, value = forwarded + fee exactly', () => {
    const value = parseUnits('0.12345678', 8);
    const r = computeFees({ value, asset: ASSETS.btc, feePercent: '1.00', costs: [{ amount: 2250n, paidIn: 'asset' }] });
    if (!r.eligible) throw new Error('expected eligible');
    expect(r.commission).toBe(123456n); // 1 % of 12345678, rounded down
    expect(r.feeCoin).toBe(123456n + 2250n);
    expect(r.forwarded + r.feeCoin).toBe(value);
    expect(formatUnits(r.forwarded, 8)).toBe('0.12219972');
  });

  it('token: gas paid in ETH is converted into the token at the price, rounding up', () => {
    const value = parseUnits('100', 6);
    const gas = parseUnits('0.0001', 18); // 0.0001 ETH at 3000 USDT/ETH = 0.30 USDT
    const r = computeFees({ value, asset: ASSETS.erc20_usdt, feePercent: '1.00', costs: [{ amount: gas, paidIn: 'native', priceInAsset: '3000' }] });
    if (!r.eligible) throw new Error('expected eligible');
    expect(r.networkCost).toBe(300000n);
    expect(r.feeCoin).toBe(1000000n + 300000n);
    expect(r.forwarded).toBe(value - r.feeCoin);
  });

  it('a cost in another coin without a price is not eligible (evidence unavailable)', () => {
    const r = computeFees({ value: 10n ** 8n, asset: ASSETS.erc20_usdt, feePercent: '1.00', costs: [{ amount: 1n, paidIn: 'native', priceInAsset: undefined }] });
    expect(r).toEqual({ eligible: false, reason: expect.stringContaining('cannot be priced') });
  });

  it('a deposit that would forward ≤ 0 is ineligible', () => {
    expect(computeFees({ value: 1000n, asset: ASSETS.btc, feePercent: '1.00', costs: [{ amount: 1000n, paidIn: 'asset' }] }).eligible).toBe(false);
    expect(computeFees({ value: 1010n, asset: ASSETS.btc, feePercent: '1.00', costs: [{ amount: 1000n, paidIn: 'asset' }] }).eligible).toBe(false);
  });

  it('money helpers never go through floats', () => {
    const wei = 2n ** 200n + 1n;
    expect(parseUnits(formatUnits(wei, 18), 18)).toBe(wei);
    expect(() => parseUnits('0.123456789', 8)).toThrow(RangeError);
    expect(percentOf(999n, '1.00')).toBe(9n);
    expect(convertUnits(1n, 18, 6, '3000')).toBe(1n); // a fraction of a unit rounds up to one
  });

  it('formatUnits prints exactly the asset\'s fractional digits, zeros and sign included', () => {
    expect(formatUnits(123456789n, 8)).toBe('1.23456789');
    expect(formatUnits(5n, 8)).toBe('0.00000005');
    expect(formatUnits(0n, 6)).toBe('0.000000');
    expect(formatUnits(-1500n, 3)).toBe('-1.500');
    expect(formatUnits(-5n, 2)).toBe('-0.05');
    expect(formatUnits(42n, 0)).toBe('42');
    expect(formatUnits(10n ** 30n, 18)).toBe('1000000000000.000000000000000000');
    expect(() => formatUnits(1n, -1)).toThrow(RangeError);
  });
});
