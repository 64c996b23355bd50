/**
 * The asset registry: data, not code paths. Canonical tickers are lowercase; a token is
 * `{chain}_{token}` and `/api/{chain}/{token}/create` names the same asset as `/api/{chain}_{token}/create`.
 * Operator state (enabled, current minimum, fee override) lives in the `assets` table on top of this.
 */
export type Family = 'utxo' | 'evm' | 'sol';
export type Priority = 'slow' | 'default' | 'fast';
export const PRIORITIES: readonly Priority[] = ['slow', 'default', 'fast'];

export interface Network {
  id: string;
  name: string;
  family: Family;
  /**
   * Address family for configurations: a callback URL belongs to exactly one (SPEC 4.6 rule 2), and
   * `address_in` derivation indexes are taken per address family (one sequence each). UTXO coins each have their own
   * address format; every EVM asset shares one address, as does every Solana asset.
   */
  addressFamily: string;
  /** BIP44 coin type (SLIP-44) used to derive address_in. */
  coinType: number;
  nativeTicker: string;
  priorities: readonly Priority[];
}

export interface Asset {
  ticker: string;
  name: string;
  symbol: string;
  network: string;
  decimals: number;
  type: 'native' | 'token';
  /** ERC-20 contract or SPL mint on mainnet; the network's configuration may override it (local devnets). */
  contract?: string;
  /** Gateway default confirmations; the sol family is always 1 (finality). */
  confirmations: number;
  /** Operator maximum for the create `confirmations` override. */
  maxConfirmations: number;
  /** Default public fee percentage, two decimals. */
  feePercent: string;
  /** Floor of the processing minimum, in whole coins as a decimal string. */
  minimumFloor: string;
  enabledByDefault: boolean;
}

export const NETWORKS: Record<string, Network> = {
  bitcoin: { id: 'bitcoin', name: 'Bitcoin', family: 'utxo', addressFamily: 'btc', coinType: 0, nativeTicker: 'btc', priorities: PRIORITIES },
  litecoin: { id: 'litecoin', name: 'Litecoin', family: 'utxo', addressFamily: 'ltc', coinType: 2, nativeTicker: 'ltc', priorities: PRIORITIES },
  bitcoincash: { id: 'bitcoincash', name: 'Bitcoin Cash', family: 'utxo', addressFamily: 'bch', coinType: 145, nativeTicker: 'bch', priorities: PRIORITIES },
  dogecoin: { id: 'dogecoin', name: 'Dogecoin', family: 'utxo', addressFamily: 'doge', coinType: 3, nativeTicker: 'doge', priorities: PRIORITIES },
  zcash: { id: 'zcash', name: 'Zcash', family: 'utxo', addressFamily: 'zec', coinType: 133, nativeTicker: 'zec', priorities: PRIORITIES },
  ethereum: { id: 'ethereum', name: 'Ethereum', family: 'evm', addressFamily: 'evm', coinType: 60, nativeTicker: 'eth', priorities: PRIORITIES },
  // Solana fees are flat per signature; the gateway offers no slow/fast choice there.
  solana: { id: 'solana', name: 'Solana', family: 'sol', addressFamily: 'sol', coinType: 501, nativeTicker: 'sol', priorities: ['default'] },
};

const utxo = (ticker: string, name: string, network: string, decimals: number, confirmations: number, minimumFloor: string): Asset => ({
  ticker, name, symbol: ticker.toUpperCase(), network, decimals, type: 'native', confirmations, maxConfirmations: 100,
  feePercent: '1.00', minimumFloor, enabledByDefault: true,
});

export const ASSETS: Record<string, Asset> = {
  btc: utxo('btc', 'Bitcoin', 'bitcoin', 8, 2, '0.0001'),
  ltc: utxo('ltc', 'Litecoin', 'litecoin', 8, 3, '0.001'),
  bch: utxo('bch', 'Bitcoin Cash', 'bitcoincash', 8, 3, '0.001'),
  doge: utxo('doge', 'Dogecoin', 'dogecoin', 8, 10, '10'),
  zec: utxo('zec', 'Zcash', 'zcash', 8, 10, '0.001'),
  eth: {
    ticker: 'eth', name: 'Ethereum', symbol: 'ETH', network: 'ethereum', decimals: 18, type: 'native', confirmations: 12,
    maxConfirmations: 200, feePercent: '1.00', minimumFloor: '0.001', enabledByDefault: true,
  },
  erc20_usdt: {
    ticker: 'erc20_usdt', name: 'Tether USD (ERC-20)', symbol: 'USDT', network: 'ethereum', decimals: 6, type: 'token',
    contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', confirmations: 12, maxConfirmations: 200, feePercent: '1.00',
    minimumFloor: '5', enabledByDefault: true,
  },
  erc20_usdc: {
    ticker: 'erc20_usdc', name: 'USD Coin (ERC-20)', symbol: 'USDC', network: 'ethereum', decimals: 6, type: 'token',
    contract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', confirmations: 12, maxConfirmations: 200, feePercent: '1.00',
    minimumFloor: '5', enabledByDefault: true,
  },
  sol: {
    ticker: 'sol', name: 'Solana', symbol: 'SOL', network: 'solana', decimals: 9, type: 'native', confirmations: 1,
    maxConfirmations: 1, feePercent: '1.00', minimumFloor: '0.01', enabledByDefault: true,
  },
  sol_usdc: {
    ticker: 'sol_usdc', name: 'USD Coin (SPL)', symbol: 'USDC', network: 'solana', decimals: 6, type: 'token',
    contract: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', confirmations: 1, maxConfirmations: 1, feePercent: '1.00',
    minimumFloor: '1', enabledByDefault: true,
  },
  sol_usdt: {
    ticker: 'sol_usdt', name: 'Tether USD (SPL)', symbol: 'USDT', network: 'solana', decimals: 6, type: 'token',
    contract: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', confirmations: 1, maxConfirmations: 1, feePercent: '1.00',
    minimumFloor: '1', enabledByDefault: true,
  },
};

/** Token path segments: `/api/erc20/usdt/create` is `erc20_usdt`. */
export function tickerFromPath(chain: string, token?: string): string {
  return token === undefined ? chain.toLowerCase() : `${chain}_${token}`.toLowerCase();
}

export function findAsset(ticker: string): Asset | undefined {
  return Object.prototype.hasOwnProperty.call(ASSETS, ticker) ? ASSETS[ticker] : undefined;
}

export function networkOf(asset: Asset): Network {
  return NETWORKS[asset.network];
}
