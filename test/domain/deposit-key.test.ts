import { depositIndex, depositKey } from '../../src/domain/deposit-key';

/** DESIGN 1: `deposit:{network}:{txid}:{index}` is the deposit's unique key and workflow ID. */
const cases: Array<[network: string, txid: string, index: number, key: string]> = [
  ['bitcoin', 'ab'.repeat(32), 0, `deposit:bitcoin:${'ab'.repeat(32)}:0`],
  ['litecoin', 'cd'.repeat(32), 7, `deposit:litecoin:${'cd'.repeat(32)}:7`],
  ['ethereum', `0x${'12'.repeat(32)}`, 3, `deposit:ethereum:0x${'12'.repeat(32)}:3`],
  ['ethereum', `0x${'34'.repeat(32)}`, -1, `deposit:ethereum:0x${'34'.repeat(32)}:-1`],
  ['solana', '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW', 1_000_000_002, 'deposit:solana:5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW:1000000002'],
];

describe('depositKey and depositIndex', () => {
  it.each(cases)('%s %s #%s → %s, and back', (network, txid, index, key) => {
    expect(depositKey({ network, txid, index })).toBe(key);
    expect(depositIndex(key)).toBe(index);
  });

  it.each(['', 'deposit:bitcoin:ab:', 'deposit:bitcoin:ab:x', 'payment:bitcoin:ab:0', 'deposit:bitcoin:ab:1.5'])('%j is not a deposit key', (key) => {
    expect(() => depositIndex(key)).toThrow(RangeError);
  });
});
