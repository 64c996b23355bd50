import { loadConfig } from '../../src/config';
import { ASSETS } from '../../src/domain/assets';
import {
  depositMinimum,
  minimumFloor,
  minimumForCost,
  minimumForPayout,
  publishedMinimum,
  statedMinimum,
  viewMinimum,
  STALE_AFTER_REFRESHES,
  type MinimumState,
} from '../../src/domain/minimum';
import { parseUnits } from '../../src/domain/money';
import { percentOf } from '../../src/domain/money';
import { STANDARD_TIERS } from '../../src/domain/standard-tiers';

/** SPEC 2.1, 2.2, 8: the operator's rule, and what the catalog, info and eligibility make of a stored figure. */

describe('minimumForCost: smallest amount whose forwarding cost is at most the share, never below the floor', () => {
  it.each([
    // cost, percent, floor, expected
    [0n, '5.00', 100_000n, 100_000n],
    [2_220n, '5.00', 100_000n, 100_000n], // 44 400 < floor
    [22_200n, '5.00', 100_000n, 444_000n], // exactly 5 %
    [22_201n, '5.00', 100_000n, 444_020n], // rounded up: 22 201 / 444 020 ≤ 5 %, 444 019 would exceed it
    [1n, '5.00', 0n, 20n],
    [1_764_000_000_000_000n, '5.00', 10n ** 15n, 35_280_000_000_000_000n], // 84 gwei·21000 → 0.03528 ETH
    [3n, '2.50', 0n, 120n],
    [7n, '0.01', 0n, 70_000n],
    [1000n, '100.00', 0n, 1000n],
  ])('cost %s at %s %% (floor %s) → %s', (cost, pct, floor, expected) => {
    const m = minimumForCost(cost, pct, floor);
    expect(m).toBe(expected);
    if (m > floor) {
      // Smallest: the cost is within the share at m, and beyond it one base unit less.
      const h = BigInt(Math.round(Number(pct) * 100));
      expect(cost * 10_000n <= m * h).toBe(true);
      expect(cost * 10_000n > (m - 1n) * h).toBe(true);
    }
  });

  it('refuses a negative cost and a zero share', () => {
    expect(() => minimumForCost(-1n, '5.00', 0n)).toThrow(RangeError);
    expect(() => minimumForCost(1n, '0.00', 0n)).toThrow(RangeError);
  });
});

describe('minimumForPayout: smallest amount whose forward the chain accepts at every fee percentage', () => {
  const tiers = STANDARD_TIERS.map((t) => t.feePercent);
  it.each([
    // networkFee, payoutFloor, percentages, expected
    [0n, 0n, ['1.00'], 0n],
    [2_840n, 5_460n, ['1.00'], 8_383n], // 8383 − 2840 − 83 = 5460; 8382 leaves 5459
    [2_840n, 546n, ['1.00', ...tiers], 3_420n],
    [2_840n, 546n, ['2.50', '1.00'], 3_472n], // an override above the tiers decides: 3472 − 2840 − 86 = 546
    [0n, 100n, ['0.00'], 100n], // a 0 % override: the floor itself
    [7_100n, 1_820n, ['1.00', '0.50'], 9_010n],
    [1n, 0n, ['99.99'], 1n], // the commission rounds down to 0
  ])('networkFee %s, payoutFloor %s, percentages %j → %s', (networkFee, payoutFloor, pcts, expected) => {
    const m = minimumForPayout({ networkFee, payoutFloor, feePercents: pcts as string[] });
    expect(m).toBe(expected);
    // Accepted at m under every percentage, and one base unit less fails the largest.
    for (const p of pcts as string[]) expect(m - networkFee - percentOf(m, p)).toBeGreaterThanOrEqual(payoutFloor);
    if (m > 0n) {
      const worst = (pcts as string[]).some((p) => m - 1n - networkFee - percentOf(m - 1n, p) < payoutFloor);
      expect(worst).toBe(true);
    }
  });

  it('refuses a 100 % commission (no amount forwards) and negative inputs', () => {
    expect(() => minimumForPayout({ networkFee: 1n, payoutFloor: 0n, feePercents: ['100'] })).toThrow(RangeError);
    expect(() => minimumForPayout({ networkFee: -1n, payoutFloor: 0n, feePercents: ['1'] })).toThrow(RangeError);
  });
});

describe('publishedMinimum: the largest of the floor, the cost share and the payout rule', () => {
  it.each([
    // ltc on a quiet chain: the floor (0.001 LTC) holds both
    [{ networkFee: 2_840n, payoutFloor: 5_460n, feePercents: ['1.00', '0.50'], maxCostPercent: '5.00', floor: 100_000n }, 100_000n],
    // btc at 20 sat/vB, two outputs: 2840 ÷ 5 % = 56 800 sat (the one-output figure was 44 400)
    [{ networkFee: 2_840n, payoutFloor: 546n, feePercents: ['1.00', '0.50'], maxCostPercent: '5.00', floor: 10_000n }, 56_800n],
    // a high payout floor against a generous cost share: the payout rule decides
    [{ networkFee: 1_000n, payoutFloor: 500_000n, feePercents: ['1.00', '3.00'], maxCostPercent: '50.00', floor: 0n }, 516_494n],
  ])('%j → %s', (o, expected) => {
    expect(publishedMinimum(o)).toBe(expected);
    expect(publishedMinimum(o)).toBeGreaterThanOrEqual(minimumForCost(o.networkFee, o.maxCostPercent, o.floor));
  });
});

describe('viewMinimum / statedMinimum', () => {
  const floor = 1000n;
  const refresh = 60_000;
  const state = (s: Partial<MinimumState>): MinimumState => ({ value: null, ageMs: null, unavailable: null, pinned: null, ...s });
  const bound = STALE_AFTER_REFRESHES * refresh;

  it.each<[string, MinimumState | undefined, bigint | null, bigint]>([
    ['no figure yet: catalog null, info the floor', undefined, null, floor],
    ['fresh figure', state({ value: 5000n, ageMs: 10 }), 5000n, 5000n],
    ['fresh figure below the floor is the floor', state({ value: 10n, ageMs: 10 }), floor, floor],
    ['at the staleness bound still current', state({ value: 5000n, ageMs: bound }), 5000n, 5000n],
    ['past the bound: null, info the last figure', state({ value: 5000n, ageMs: bound + 1 }), null, 5000n],
    ['latest refresh could not compute: null, info the last figure', state({ value: 5000n, ageMs: 10, unavailable: 'no price' }), null, 5000n],
    ['never computed, unavailable: null, info the floor', state({ unavailable: 'no fee estimate' }), null, floor],
    ['pinned: shown even when the computed figure is stale', state({ value: 5000n, ageMs: bound * 10, pinned: 7000n }), 7000n, 7000n],
    ['pinned while unavailable', state({ unavailable: 'no price', pinned: 7000n }), 7000n, 7000n],
  ])('%s', (_name, s, current, stated) => {
    expect(viewMinimum(s, floor, refresh)).toEqual({ current, stated });
    expect(statedMinimum(s, floor)).toBe(stated);
  });
});

describe('configuration', () => {
  it('defaults: refresh every 5 minutes, cost at most 5 %', () => {
    expect(loadConfig({})).toMatchObject({ minimumRefreshMs: 300_000, minimumMaxCostPercent: '5.00' });
    expect(loadConfig({ MINIMUM_REFRESH_MS: '2000', MINIMUM_MAX_COST_PERCENT: '2.5' })).toMatchObject({ minimumRefreshMs: 2000, minimumMaxCostPercent: '2.50' });
  });

  it.each([
    ['MINIMUM_REFRESH_MS', '999'],
    ['MINIMUM_REFRESH_MS', '5m'],
    ['MINIMUM_MAX_COST_PERCENT', '0'],
    ['MINIMUM_MAX_COST_PERCENT', '101'],
    ['MINIMUM_MAX_COST_PERCENT', '5.123'],
    ['MINIMUM_MAX_COST_PERCENT', '-5'],
  ])('%s=%s stops the process naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^invalid configuration: ${name}`));
  });
});

describe('depositMinimum: what an observed deposit is held to (SPEC 8: the current economics, or a lower figure still honoured)', () => {
  const state = (s: Partial<MinimumState>): MinimumState => ({ value: null, ageMs: null, unavailable: null, pinned: null, ...s });
  const btcFloor = parseUnits(ASSETS.btc.minimumFloor, 8);

  it.each<[string, string, MinimumState | undefined, bigint]>([
    ['no figure yet: the registry floor', 'btc', undefined, btcFloor],
    ['the refresh figure', 'btc', state({ value: btcFloor * 3n, ageMs: 10 }), btcFloor * 3n],
    ['a stale figure still holds (info states it)', 'btc', state({ value: btcFloor * 3n, ageMs: 10 ** 12 }), btcFloor * 3n],
    ['a figure the refresh could not renew still holds', 'btc', state({ value: btcFloor * 2n, ageMs: 10, unavailable: 'no price' }), btcFloor * 2n],
    ['never below the floor', 'btc', state({ value: 1n, ageMs: 10 }), btcFloor],
    ['the pin beats the figure', 'btc', state({ value: btcFloor * 3n, ageMs: 10, pinned: btcFloor * 5n }), btcFloor * 5n],
    ['a token: its own floor and decimals', 'erc20_usdt', undefined, parseUnits(ASSETS.erc20_usdt.minimumFloor, 6)],
    ['a lower figure still honoured: the customer read it a moment ago', 'btc', state({ value: btcFloor * 3n, ageMs: 10, honoured: btcFloor * 2n }), btcFloor * 2n],
    ['a lower honoured figure under a pin', 'btc', state({ value: btcFloor * 3n, pinned: btcFloor * 5n, honoured: btcFloor * 3n }), btcFloor * 3n],
    ['an honoured figure above the current one changes nothing', 'btc', state({ value: btcFloor * 3n, ageMs: 10, honoured: btcFloor * 4n }), btcFloor * 3n],
    ['an honoured figure never goes below the floor', 'btc', state({ value: btcFloor * 3n, ageMs: 10, honoured: 1n }), btcFloor],
    ['no honoured figure (null)', 'btc', state({ value: btcFloor * 3n, ageMs: 10, honoured: null }), btcFloor * 3n],
  ])('%s', (_name, ticker, s, expected) => {
    expect(depositMinimum(s, ASSETS[ticker])).toBe(expected);
    expect(minimumFloor(ASSETS[ticker])).toBe(parseUnits(ASSETS[ticker].minimumFloor, ASSETS[ticker].decimals));
  });
});
