import * as web3 from '@solana/web3.js';
import { PublicKey } from '@solana/web3.js';
import * as splToken from '@solana/spl-token';
import { UNSPENDABLE_SOL_ADDRESSES } from '../../src/chains/sol/address';
import { canonicalAddress, canonicalIfValid, deriveAddressIn, deriveEvmWallet, deriveSolKeypair, deriveUtxoKey, utxoNetwork, utxoOutputScript, validateAddress } from '../../src/chains/addresses';
import { HdSeed } from '../../src/chains/keys';
import { ADDRESS_FIXTURES } from './address-fixtures';

const TEST_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

describe('validateAddress fixtures', () => {
  for (const f of ADDRESS_FIXTURES) {
    it.each(f.valid)(`${f.network} ${f.mode}: valid %s`, (a) => {
      expect(validateAddress(f.network, f.mode, a)).toBe(true);
    });
    it.each(f.invalid)(`${f.network} ${f.mode}: invalid %s (%s)`, (a) => {
      expect(validateAddress(f.network, f.mode, a)).toBe(false);
    });
  }

  it('refuses an off-curve Solana address (a program-derived address)', () => {
    const [pda] = PublicKey.findProgramAddressSync([Buffer.from('vault')], new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'));
    expect(PublicKey.isOnCurve(pda.toBytes())).toBe(false);
    expect(validateAddress('solana', 'mainnet', pda.toBase58())).toBe(false);
  });

  it.each([
    ['System Program', '11111111111111111111111111111111'],
    ['Clock sysvar', 'SysvarC1ock11111111111111111111111111111111'],
    ['Rent sysvar', 'SysvarRent111111111111111111111111111111111'],
    ['Token program', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'],
    ['Stake program', 'Stake11111111111111111111111111111111111111'],
    ['incinerator', '1nc1nerator11111111111111111111111111111111'],
  ])('refuses the %s as a Solana payout address although it is canonical base58 of 32 bytes', (_name, a) => {
    expect(new PublicKey(a).toBase58()).toBe(a);
    expect(validateAddress('solana', 'mainnet', a)).toBe(false);
    expect(validateAddress('solana', 'regtest', a)).toBe(false);
  });

  it('refuses every well-known program, sysvar and token-program address of the Solana libraries', () => {
    const fromLibraries = [
      web3.SystemProgram.programId, web3.StakeProgram.programId, web3.VoteProgram.programId, web3.ComputeBudgetProgram.programId,
      web3.AddressLookupTableProgram.programId, web3.Ed25519Program.programId, web3.Secp256k1Program.programId,
      web3.BPF_LOADER_PROGRAM_ID, web3.BPF_LOADER_DEPRECATED_PROGRAM_ID, web3.STAKE_CONFIG_ID,
      web3.SYSVAR_CLOCK_PUBKEY, web3.SYSVAR_EPOCH_SCHEDULE_PUBKEY, web3.SYSVAR_INSTRUCTIONS_PUBKEY, web3.SYSVAR_RECENT_BLOCKHASHES_PUBKEY,
      web3.SYSVAR_RENT_PUBKEY, web3.SYSVAR_REWARDS_PUBKEY, web3.SYSVAR_SLOT_HASHES_PUBKEY, web3.SYSVAR_SLOT_HISTORY_PUBKEY,
      web3.SYSVAR_STAKE_HISTORY_PUBKEY, splToken.TOKEN_PROGRAM_ID, splToken.TOKEN_2022_PROGRAM_ID, splToken.ASSOCIATED_TOKEN_PROGRAM_ID,
      splToken.NATIVE_MINT, splToken.NATIVE_MINT_2022,
    ].map((k) => k.toBase58());
    for (const a of fromLibraries) expect([a, UNSPENDABLE_SOL_ADDRESSES.has(a)]).toEqual([a, true]);
    for (const a of UNSPENDABLE_SOL_ADDRESSES) expect([a, validateAddress('solana', 'mainnet', a)]).toEqual([a, false]);
    // An ordinary wallet key is still accepted.
    expect(validateAddress('solana', 'mainnet', web3.Keypair.generate().publicKey.toBase58())).toBe(true);
  });

  it('throws only for an unknown network', () => {
    expect(() => validateAddress('tron', 'mainnet', 'T...')).toThrow(/unknown network/);
  });
});

describe('deriveAddressIn: BIP test-vector mnemonic', () => {
  const seed = HdSeed.fromMnemonic(TEST_MNEMONIC);

  it.each([
    // BIP84 (bitcoin/bips bip-0084.mediawiki, first two receive addresses)
    ['bitcoin', 'mainnet', 0n, 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu'],
    ['bitcoin', 'mainnet', 1n, 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g'],
    // m/84'/2'/0'/0/0, m/44'/145'/0'/0/0, m/44'/3'/0'/0/0, m/44'/133'/0'/0/0 as wallets publish them
    ['litecoin', 'mainnet', 0n, 'ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh'],
    ['bitcoincash', 'mainnet', 0n, 'bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6'],
    ['bitcoincash', 'mainnet', 1n, 'bitcoincash:qp8sfdhgjlq68hlzka9lcsxtcnvuvnd0xqxugfzzc5'],
    ['dogecoin', 'mainnet', 0n, 'DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC'],
    ['zcash', 'mainnet', 0n, 't1XVXWCvpMgBvUaed4XDqWtgQgJSu1Ghz7F'],
    // BIP44 m/44'/60'/0'/0/0 (MetaMask's first account of the test mnemonic)
    ['ethereum', 'mainnet', 0n, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94'],
    // SLIP-10 m/44'/501'/0'/0' (Phantom/Solflare first account)
    ['solana', 'mainnet', 0n, 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk'],
  ] as const)('%s %s index %s → %s', (network, mode, index, expected) => {
    expect(deriveAddressIn(seed, network, mode, index)).toBe(expected);
  });

  it('regtest addresses keep the key and change the encoding', () => {
    expect(deriveAddressIn(seed, 'bitcoin', 'regtest', 0n)).toBe('bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgx');
    expect(deriveAddressIn(seed, 'litecoin', 'regtest', 0n)).toMatch(/^rltc1q/);
    expect(deriveAddressIn(seed, 'bitcoincash', 'regtest', 0n)).toMatch(/^bchreg:q/);
    expect(deriveAddressIn(seed, 'zcash', 'regtest', 0n)).toMatch(/^tm/);
  });

  it.each(['bitcoin', 'litecoin', 'bitcoincash', 'dogecoin', 'zcash', 'ethereum', 'solana'])(
    '%s: every derived address validates in its own mode and differs per index',
    (network) => {
      for (const mode of ['mainnet', 'testnet', 'regtest'] as const) {
        const a = deriveAddressIn(seed, network, mode, 7n);
        expect(validateAddress(network, mode, a)).toBe(true);
        expect(a).not.toBe(deriveAddressIn(seed, network, mode, 8n));
      }
    },
  );

  it('key helpers agree with deriveAddressIn', () => {
    const u = deriveUtxoKey(seed, 'bitcoin', 'mainnet', 0n);
    expect(u.path).toBe("m/84'/0'/0'/0/0");
    expect(u.address).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(Buffer.from(u.outputScript).toString('hex')).toBe(
      Buffer.from(utxoOutputScript(utxoNetwork('bitcoin', 'mainnet'), u.address)).toString('hex'),
    );
    expect(deriveEvmWallet(seed, 'ethereum', 'mainnet', 0n).wallet.address).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
    expect(deriveSolKeypair(seed, 'solana', 'mainnet', 0n).keypair.publicKey.toBase58()).toBe('HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk');
  });

  it('output scripts: P2PKH for doge, OP_0 <20> for p2wpkh, CashAddr decodes to P2PKH', () => {
    const doge = utxoOutputScript(utxoNetwork('dogecoin', 'mainnet'), 'DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC');
    expect(Buffer.from(doge).toString('hex')).toMatch(/^76a914[0-9a-f]{40}88ac$/);
    const bch = utxoOutputScript(utxoNetwork('bitcoincash', 'mainnet'), 'bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6');
    expect(Buffer.from(bch).toString('hex')).toMatch(/^76a914[0-9a-f]{40}88ac$/);
    expect(() => utxoOutputScript(utxoNetwork('bitcoin', 'mainnet'), 'nonsense')).toThrow();
  });
});

describe('canonicalAddress', () => {
  it.each([
    ['bitcoin', 'BC1QCR8TE4KR609GCAWUTMRZA0J4XV80JY8Z306FYU', 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu'],
    ['bitcoin', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2'],
    ['bitcoincash', 'qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6', 'bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6'],
    ['bitcoincash', 'BITCOINCASH:QQYX49MU0KKN9FTFJ6HJE6G2WFER34YFNQ5TAHQ3Q6', 'bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6'],
    ['ethereum', '0x9858effd232b4033e47d90003d41ec34ecaeda94', '0x9858EfFD232B4033E47d90003D41EC34EcaEda94'],
    ['solana', 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk', 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk'],
  ])('%s %s → %s', (network, input, expected) => {
    expect(canonicalAddress(network, 'mainnet', input)).toBe(expected);
  });

  it('throws for an invalid address', () => {
    expect(() => canonicalAddress('bitcoin', 'mainnet', 'nope')).toThrow();
  });

  it('canonicalIfValid agrees with validateAddress and canonicalAddress on every fixture, asked twice (EVM answers are remembered)', () => {
    for (const f of ADDRESS_FIXTURES) {
      for (const round of [1, 2]) {
        for (const a of f.valid) expect([round, canonicalIfValid(f.network, f.mode, a)]).toEqual([round, canonicalAddress(f.network, f.mode, a)]);
        for (const [a] of f.invalid) expect([round, a, canonicalIfValid(f.network, f.mode, a)]).toEqual([round, a, undefined]);
      }
    }
    // A wrong checksum stays refused, its lower-case spelling stays accepted.
    const good = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';
    const bad = good.replace('Ef', 'eF');
    for (let i = 0; i < 2; i++) {
      expect(validateAddress('ethereum', 'mainnet', bad)).toBe(false);
      expect(canonicalIfValid('ethereum', 'mainnet', good.toLowerCase())).toBe(good);
    }
  });
});
