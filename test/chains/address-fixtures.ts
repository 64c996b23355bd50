import type { ChainMode } from '../../src/chains/config';

/**
 * Payout-address fixtures per network and mode ({ valid, invalid } like bitcoinjs-lib's fixture files).
 * Sources: BIP84/BIP44 addresses of the BIP39 test mnemonic "abandon ×11 about" (published by the BIPs
 * and by wallet test suites), BIP173/BIP350 vectors, and well-known public addresses.
 */
export interface AddressFixture {
  network: string;
  mode: ChainMode;
  valid: string[];
  invalid: Array<[string, string]>;
}

const ETH = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';

export const ADDRESS_FIXTURES: AddressFixture[] = [
  {
    network: 'bitcoin',
    mode: 'mainnet',
    valid: [
      'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu',
      'BC1QCR8TE4KR609GCAWUTMRZA0J4XV80JY8Z306FYU',
      '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2',
      '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy',
      'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3',
      'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0',
    ],
    invalid: [
      ['bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv', 'bad bech32 checksum'],
      ['bc1qcR8te4kr609gcawutmrza0j4xv80jy8z306fyu', 'mixed-case bech32'],
      ['tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 'testnet address on mainnet'],
      ['bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgx', 'regtest address on mainnet'],
      ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh', 'v0 program encoded with bech32m (BIP350)'],
      ['bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', 'future witness version: never a payout'],
      ['1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3', 'bad base58 checksum'],
      ['ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh', 'litecoin address'],
      [ETH, 'EVM address'],
      [' bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', 'leading space'],
      ['', 'empty'],
    ],
  },
  {
    network: 'bitcoin',
    mode: 'regtest',
    valid: ['bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgx', 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn'],
    invalid: [['bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', 'mainnet address on regtest']],
  },
  {
    network: 'bitcoin',
    mode: 'testnet',
    valid: ['tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx'],
    invalid: [['bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgx', 'regtest hrp on testnet']],
  },
  {
    network: 'litecoin',
    mode: 'mainnet',
    valid: ['ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh', 'LUWPbpM43E2p7ZSh8cyTBEkvpHmr3cB8Ez'],
    invalid: [
      ['bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', 'bitcoin address'],
      ['3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', 'deprecated 3-prefix P2SH, ambiguous with bitcoin'],
      ['ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wj', 'bad checksum'],
      ['rltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c23g5xdr', 'regtest address on mainnet'],
    ],
  },
  {
    network: 'litecoin',
    mode: 'regtest',
    valid: ['rltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c23g5xdr'],
    invalid: [['ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh', 'mainnet address on regtest']],
  },
  {
    network: 'bitcoincash',
    mode: 'mainnet',
    valid: [
      'bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6',
      'qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6',
      'BITCOINCASH:QQYX49MU0KKN9FTFJ6HJE6G2WFER34YFNQ5TAHQ3Q6',
    ],
    invalid: [
      ['1mW6fDEMjKrDHvLvoEsaeLxSCzZBf3Bfg', 'legacy base58: CashAddr only'],
      ['bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q7', 'bad checksum'],
      ['bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahQ3q6', 'mixed case'],
      ['bchtest:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnqseeszx8x', 'testnet prefix on mainnet'],
      ['qqyx49mu0kkn9ftfj6hje6g2wfer34yfnqseeszx8x', 'prefixless testnet address on mainnet'],
      ['bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', 'bitcoin address'],
    ],
  },
  {
    network: 'bitcoincash',
    mode: 'testnet',
    valid: ['bchtest:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnqseeszx8x'],
    invalid: [['bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6', 'mainnet prefix on testnet']],
  },
  {
    network: 'dogecoin',
    mode: 'mainnet',
    valid: ['DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC'],
    invalid: [
      ['DRjyUS2uuieEPkhZNdQz8hE5YycxVEqSXA', 'bad checksum'],
      ['1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', 'bitcoin address'],
      ['doge1qcr8te4kr609gcawutmrza0j4xv80jy8zsq2pv3', 'no segwit on dogecoin'],
      ['LUWPbpM43E2p7ZSh8cyTBEkvpHmr3cB8Ez', 'litecoin address'],
    ],
  },
  {
    network: 'zcash',
    mode: 'mainnet',
    valid: ['t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7F'],
    invalid: [
      ['t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7G', 'bad checksum'],
      ['tmPLGq3RDkLhRcpr4jFXaNZMAHHXiVerN4Z', 'testnet/regtest t-address on mainnet'],
      ['1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', 'bitcoin address'],
      ['zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9sly', 'shielded address'],
    ],
  },
  {
    network: 'zcash',
    mode: 'regtest',
    valid: ['tmPLGq3RDkLhRcpr4jFXaNZMAHHXiVerN4Z'],
    invalid: [['t1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7F', 'mainnet t-address on regtest']],
  },
  {
    network: 'ethereum',
    mode: 'mainnet',
    valid: [ETH, ETH.toLowerCase(), '0x' + ETH.slice(2).toUpperCase()],
    invalid: [
      ['0x9858EfFD232B4033E47d90003D41EC34EcaEda95', 'mixed case with a wrong checksum'],
      ['0x9858efFD232B4033E47d90003D41EC34EcaEda94', 'one letter case flipped'],
      [ETH.slice(2), 'no 0x prefix'],
      ['XE73038O073KBC0LLJYAQ6IZQLI1W4S8J90', 'ICAP'],
      ['0x0000000000000000000000000000000000000000', 'zero address (burn)'],
      [ETH.slice(0, 41), '39 hex digits'],
      [ETH + '0', '41 hex digits'],
      ['bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', 'bitcoin address'],
    ],
  },
  {
    network: 'solana',
    mode: 'mainnet',
    valid: ['HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk'],
    invalid: [
      ['HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqx', 'too short (fewer than 32 bytes)'],
      ['HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpq0', 'not base58 (0)'],
      [ETH, 'EVM address'],
      ['', 'empty'],
    ],
  },
];
