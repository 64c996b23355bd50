import {
  callbackConfirmations,
  confirmationsAtDetection,
  dueHeight,
  requiredConfirmations,
  shownConfirmations,
  showsFinalityOnly,
} from '../../src/domain/finality';

/** SPEC 2.4, 2.6, 4.6 and 6 rule 8: the sol family shows finality 0 or 1, never a slot distance. */

describe('showsFinalityOnly: the sol family only', () => {
  it.each([
    ['solana', true],
    ['ethereum', false],
    ['bitcoin', false],
    ['litecoin', false],
    ['unknown-network', false],
  ])('%s → %s', (network, expected) => {
    expect(showsFinalityOnly(network)).toBe(expected);
  });
});

describe('shownConfirmations: a reading as the merchant sees it', () => {
  it.each([
    ['solana', 0, 0],
    ['solana', 1, 1],
    ['solana', 40, 1],
    ['solana', -1, 0],
    ['ethereum', 0, 0],
    ['ethereum', 12, 12],
    ['bitcoin', 3, 3],
    ['bitcoin', -2, 0],
  ])('%s reading %s → %s', (network, count, expected) => {
    expect(shownConfirmations(network, count)).toBe(expected);
  });
});

describe('requiredConfirmations: the override does not change sol-family finality', () => {
  it.each([
    ['solana', 1, 1],
    ['solana', 30, 1],
    ['ethereum', 12, 12],
    ['ethereum', 1, 1],
    ['bitcoin', 6, 6],
  ])('%s asked %s → %s', (network, chosen, expected) => {
    expect(requiredConfirmations(network, chosen)).toBe(expected);
  });
});

describe('callbackConfirmations: pending 0 and confirmed 1 where only finality shows', () => {
  it.each([
    ['solana', 'pending', 0, 0],
    ['solana', 'pending', 1, 0],
    ['solana', 'confirmed', 0, 1],
    ['solana', 'confirmed', 1, 1],
    ['ethereum', 'pending', 3, 3],
    ['ethereum', 'confirmed', 12, 12],
    ['bitcoin', 'confirmed', 2, 2],
    [undefined, 'confirmed', 4, 4],
  ] as const)('%s %s with count %s → %s', (network, event, count, expected) => {
    expect(callbackConfirmations(network, event, count)).toBe(expected);
  });
});

describe('confirmationsAtDetection: at least 1 once mined, 0 where finality is checked later', () => {
  it.each([
    ['ethereum', 10n, 10n, 1],
    ['ethereum', 10n, 14n, 5],
    ['litecoin', 10n, 9n, 1],
    ['solana', 10n, 100n, 0],
  ])('%s block %s at tip %s → %s', (network, height, tip, expected) => {
    expect(confirmationsAtDetection(network, height, tip)).toBe(expected);
  });
});

describe('dueHeight: when the watcher should tell the workflow to look', () => {
  it.each([
    ['ethereum', 100n, 12, 111n],
    ['bitcoin', 100n, 1, 100n],
    ['bitcoin', 100n, 0, 100n],
    ['solana', 100n, 1, 132n],
  ])('%s block %s needing %s → %s', (network, block, required, expected) => {
    expect(dueHeight(network, block, required)).toBe(expected);
  });
});
