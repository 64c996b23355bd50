import { NETWORKS } from '../domain/assets';
import type { ChainMode } from './config';
import type { HdSeed } from './keys';
import { checksumEvmAddress, deriveEvmWallet, evmChecksumIfValid, validateEvmAddress } from './evm/address';
import { deriveSolAddress, validateSolAddress } from './sol/address';
import { canonicalUtxoAddress, deriveUtxoKey, validateUtxoAddress } from './utxo/address';
import { utxoNetwork } from './utxo/networks';

export { deriveEvmWallet, checksumEvmAddress, type EvmKey } from './evm/address';
export { deriveSolKeypair, type SolKey } from './sol/address';
export { deriveUtxoKey, decodeUtxoAddress, canonicalUtxoAddress, utxoOutputScript, type UtxoKey, type UtxoDestination } from './utxo/address';
export { utxoNetwork, type UtxoNetwork, type UtxoCoin } from './utxo/networks';

function familyOf(networkId: string) {
  const net = Object.prototype.hasOwnProperty.call(NETWORKS, networkId) ? NETWORKS[networkId] : undefined;
  if (!net) throw new Error(`unknown network ${networkId}`);
  return net.family;
}

/**
 * Whether `address` is a valid payout address on the network (registry id: bitcoin, litecoin,
 * bitcoincash, dogecoin, zcash, ethereum, solana) in the given mode. Never throws for a bad address;
 * throws only for an unknown network id.
 */
export function validateAddress(networkId: string, mode: ChainMode, address: string): boolean {
  switch (familyOf(networkId)) {
    case 'utxo':
      return validateUtxoAddress(utxoNetwork(networkId, mode), address);
    case 'evm':
      return validateEvmAddress(address);
    case 'sol':
      return validateSolAddress(address);
  }
}

/** address_in of derivation index i: P2WPKH (btc, ltc), CashAddr P2PKH (bch), P2PKH (doge, zec t1/tm), EIP-55 (evm), base58 (sol). */
export function deriveAddressIn(seed: HdSeed, networkId: string, mode: ChainMode, index: bigint): string {
  switch (familyOf(networkId)) {
    case 'utxo':
      return deriveUtxoKey(seed, networkId, mode, index).address;
    case 'evm':
      return checksumEvmAddress(deriveEvmWallet(seed, networkId, mode, index).address);
    case 'sol':
      return deriveSolAddress(seed, networkId, mode, index);
  }
}

/**
 * The spelling deriveAddressIn uses for the same destination (EIP-55 for EVM, lower-case bech32 and
 * prefixed CashAddr), so that two spellings of one address compare equal. Throws for an invalid address.
 */
export function canonicalAddress(networkId: string, mode: ChainMode, address: string): string {
  const canonical = canonicalIfValid(networkId, mode, address);
  if (canonical === undefined) throw new Error(`not a valid ${networkId} ${mode} address`);
  return canonical;
}

/** canonicalAddress of a valid payout address (validateAddress), undefined for any other text: one check, never throws for an address. */
export function canonicalIfValid(networkId: string, mode: ChainMode, address: string): string | undefined {
  switch (familyOf(networkId)) {
    case 'utxo': {
      const network = utxoNetwork(networkId, mode);
      return validateUtxoAddress(network, address) ? canonicalUtxoAddress(network, address) : undefined;
    }
    case 'evm':
      return evmChecksumIfValid(address);
    case 'sol':
      return validateSolAddress(address) ? address : undefined;
  }
}
