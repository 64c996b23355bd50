import { networks as btcNetworks, type Network } from 'bitcoinjs-lib';
import type { ChainMode } from '../config';

export type UtxoCoin = 'btc' | 'ltc' | 'bch' | 'doge' | 'zec';

/**
 * Address parameters of one UTXO coin in one mode. It *is* a bitcoinjs-lib `Network` (keys, WIF,
 * scripts, bech32 for the segwit coins) with what bitcoinjs cannot express added beside it:
 * - `segwit`: whether bech32/bech32m addresses exist (btc, ltc). For the others `bech32` is a
 *   placeholder that never matches, so bitcoinjs never accepts a bech32 string for them.
 * - `pubKeyHashPrefix` / `scriptHashPrefix`: the base58check version bytes. One byte for most coins,
 *   two for Zcash transparent addresses (t1/t3 on mainnet, tm/t2 on testnet and regtest); for zec the
 *   numeric `pubKeyHash`/`scriptHash` fields hold the 2-byte value and must not be handed to bitcoinjs
 *   payment encoders — use the prefixes.
 * - `cashAddrPrefix`: Bitcoin Cash CashAddr prefix (bitcoincash, bchtest, bchreg).
 */
export interface UtxoNetwork extends Network {
  coin: UtxoCoin;
  mode: ChainMode;
  segwit: boolean;
  pubKeyHashPrefix: Uint8Array;
  scriptHashPrefix: Uint8Array;
  cashAddrPrefix?: string;
}

const NO_BECH32 = '\u0000none';

/** BIP32 version bytes of bitcoin (xpub/tpub). The gateway derives from a seed; these only name exports. */
const XPUB = { public: 0x0488b21e, private: 0x0488ade4 };
const TPUB = { public: 0x043587cf, private: 0x04358394 };

function net(coin: UtxoCoin, mode: ChainMode, base: Network, extra: Partial<UtxoNetwork> = {}): UtxoNetwork {
  const p2pkh = extra.pubKeyHashPrefix ?? Uint8Array.of(base.pubKeyHash);
  const p2sh = extra.scriptHashPrefix ?? Uint8Array.of(base.scriptHash);
  return Object.freeze({
    ...base,
    coin,
    mode,
    segwit: base.bech32 !== NO_BECH32,
    pubKeyHashPrefix: p2pkh,
    scriptHashPrefix: p2sh,
    ...extra,
  });
}

const be16 = (n: number) => Uint8Array.of(n >> 8, n & 0xff);

const TABLE: Record<UtxoCoin, Record<ChainMode, UtxoNetwork>> = {
  btc: {
    mainnet: net('btc', 'mainnet', btcNetworks.bitcoin),
    testnet: net('btc', 'testnet', btcNetworks.testnet),
    regtest: net('btc', 'regtest', btcNetworks.regtest),
  },
  // Litecoin: M-addresses (0x32) for P2SH; the deprecated 3-prefix (0x05) is refused to avoid BTC mix-ups.
  ltc: {
    mainnet: net('ltc', 'mainnet', {
      messagePrefix: '\x19Litecoin Signed Message:\n', bech32: 'ltc', bip32: { public: 0x019da462, private: 0x019d9cfe },
      pubKeyHash: 0x30, scriptHash: 0x32, wif: 0xb0,
    }),
    testnet: net('ltc', 'testnet', {
      messagePrefix: '\x19Litecoin Signed Message:\n', bech32: 'tltc', bip32: TPUB, pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef,
    }),
    regtest: net('ltc', 'regtest', {
      messagePrefix: '\x19Litecoin Signed Message:\n', bech32: 'rltc', bip32: TPUB, pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef,
    }),
  },
  // Bitcoin Cash: CashAddr only. Legacy base58 prefixes are kept for keys/WIF, not accepted as addresses.
  bch: {
    mainnet: net('bch', 'mainnet', { ...btcNetworks.bitcoin, messagePrefix: '\x18Bitcoin Signed Message:\n', bech32: NO_BECH32 }, { cashAddrPrefix: 'bitcoincash' }),
    testnet: net('bch', 'testnet', { ...btcNetworks.testnet, bech32: NO_BECH32 }, { cashAddrPrefix: 'bchtest' }),
    regtest: net('bch', 'regtest', { ...btcNetworks.regtest, bech32: NO_BECH32 }, { cashAddrPrefix: 'bchreg' }),
  },
  doge: {
    mainnet: net('doge', 'mainnet', {
      messagePrefix: '\x19Dogecoin Signed Message:\n', bech32: NO_BECH32, bip32: { public: 0x02facafd, private: 0x02fac398 },
      pubKeyHash: 0x1e, scriptHash: 0x16, wif: 0x9e,
    }),
    testnet: net('doge', 'testnet', {
      messagePrefix: '\x19Dogecoin Signed Message:\n', bech32: NO_BECH32, bip32: TPUB, pubKeyHash: 0x71, scriptHash: 0xc4, wif: 0xf1,
    }),
    regtest: net('doge', 'regtest', {
      messagePrefix: '\x19Dogecoin Signed Message:\n', bech32: NO_BECH32, bip32: TPUB, pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef,
    }),
  },
  // Zcash transparent addresses: 2-byte base58check prefixes (zcashd chainparams.cpp).
  zec: {
    mainnet: net(
      'zec', 'mainnet',
      { messagePrefix: '\x18Zcash Signed Message:\n', bech32: NO_BECH32, bip32: XPUB, pubKeyHash: 0x1cb8, scriptHash: 0x1cbd, wif: 0x80 },
      { pubKeyHashPrefix: be16(0x1cb8), scriptHashPrefix: be16(0x1cbd) },
    ),
    testnet: net(
      'zec', 'testnet',
      { messagePrefix: '\x18Zcash Signed Message:\n', bech32: NO_BECH32, bip32: TPUB, pubKeyHash: 0x1d25, scriptHash: 0x1cba, wif: 0xef },
      { pubKeyHashPrefix: be16(0x1d25), scriptHashPrefix: be16(0x1cba) },
    ),
    regtest: net(
      'zec', 'regtest',
      { messagePrefix: '\x18Zcash Signed Message:\n', bech32: NO_BECH32, bip32: TPUB, pubKeyHash: 0x1d25, scriptHash: 0x1cba, wif: 0xef },
      { pubKeyHashPrefix: be16(0x1d25), scriptHashPrefix: be16(0x1cba) },
    ),
  },
};

/** Registry network id (src/domain/assets.ts) → UTXO coin. */
export const UTXO_COIN_OF_NETWORK: Readonly<Record<string, UtxoCoin>> = {
  bitcoin: 'btc',
  litecoin: 'ltc',
  bitcoincash: 'bch',
  dogecoin: 'doge',
  zcash: 'zec',
};

export function isUtxoNetwork(networkId: string): boolean {
  return Object.prototype.hasOwnProperty.call(UTXO_COIN_OF_NETWORK, networkId);
}

/** The address parameters of a UTXO network (`bitcoin`, `litecoin`, … or the coin `btc`, `ltc`, …) in a mode. */
export function utxoNetwork(networkId: string, mode: ChainMode): UtxoNetwork {
  const coin = (isUtxoNetwork(networkId) ? UTXO_COIN_OF_NETWORK[networkId] : networkId) as UtxoCoin;
  const byMode = Object.prototype.hasOwnProperty.call(TABLE, coin) ? TABLE[coin] : undefined;
  if (!byMode || !byMode[mode]) throw new Error(`not a UTXO network: ${networkId} (${mode})`);
  return byMode[mode];
}
