import { ASSETS } from '../../src/domain/assets';
import { nativeCostInAsset, nativeOf, nativePriceInAsset } from '../../src/domain/network-cost';

/** A forward's cost paid in the native coin, recovered in the deposit's asset: one conversion, rounded up. */

describe('nativeOf', () => {
  it.each([
    ['btc', 'btc'],
    ['eth', 'eth'],
    ['erc20_usdt', 'eth'],
    ['sol', 'sol'],
    ['sol_usdc', 'sol'],
  ])('%s → %s', (ticker, native) => {
    expect(nativeOf(ASSETS[ticker]).ticker).toBe(native);
  });
});

describe('nativePriceInAsset: units of the asset per native coin', () => {
  it.each([
    ['eth', undefined, undefined, '1'],
    ['btc', '1', '2', '1'],
    ['erc20_usdt', '3000', '1', '3000.000000000000000000'],
    ['erc20_usdt', '3000', '0.998', '3006.012024048096192385'], // rounded up
    ['sol_usdc', '150', '1', '150.000000000000000000'],
    ['erc20_usdt', undefined, '1', undefined],
    ['erc20_usdt', '3000', undefined, undefined],
  ])('%s with native at %s and asset at %s USDT → %s', (ticker, nativeUsdt, assetUsdt, expected) => {
    expect(nativePriceInAsset(ASSETS[ticker], nativeUsdt, assetUsdt)).toBe(expected);
  });
});

describe('nativeCostInAsset: base units of the native coin in base units of the asset', () => {
  it.each([
    ['erc20_usdt', 10n ** 14n, '3000', 300_000n], // 0.0001 ETH at 3000 = 0.30 USDT
    ['erc20_usdt', 1n, '3000', 1n], // a wei of gas still costs a base unit: rounded up
    ['erc20_usdt', 0n, '3000', 0n],
    ['sol_usdc', 2_039_280n + 10_000n, '150', 307_392n], // rent + two signatures at 150 USDC/SOL
    ['sol_usdc', 2_039_281n + 10_000n, '150', 307_393n], // rounded up
    ['eth', 21_000n * 10n ** 9n, '1', 21_000n * 10n ** 9n],
  ])('%s: %s at %s → %s', (ticker, amount, price, expected) => {
    expect(nativeCostInAsset(ASSETS[ticker], amount, price)).toBe(expected);
  });
});
