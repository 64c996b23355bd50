import { getAddress, ZeroAddress, type Wallet } from 'ethers';
import type { ChainMode } from '../config';
import { derivationPath, type HdSeed } from '../keys';
import { nativeWallet } from './signing-key';

/**
 * An EVM payout address: `0x` and 40 hex digits. All-lowercase and all-uppercase hex carry no
 * checksum and are accepted; mixed case must match the EIP-55 checksum (ethers getAddress). ethers
 * would also take a bare 40-hex string or an ICAP `XE…` address; neither is accepted here. The zero
 * address is refused: funds sent there are burnt.
 */
export function validateEvmAddress(text: string): boolean {
  return evmChecksumIfValid(text) !== undefined;
}

/** Recently checked addresses and their EIP-55 form: a shop sends the same payout address with every create. */
const checked = new Map<string, string | undefined>();
const CHECKED_MAX = 1024;

/** The EIP-55 form of a valid payout address (see validateEvmAddress), undefined for an invalid one: one keccak. */
export function evmChecksumIfValid(text: string): string | undefined {
  if (typeof text !== 'string' || text.length !== 42 || !text.startsWith('0x')) return undefined;
  if (checked.has(text)) return checked.get(text);
  let checksummed: string | undefined;
  try {
    checksummed = getAddress(text);
  } catch {
    checksummed = undefined;
  }
  if (checksummed === ZeroAddress) checksummed = undefined;
  if (checked.size >= CHECKED_MAX) checked.clear();
  checked.set(text, checksummed);
  return checksummed;
}

/** The EIP-55 form of a valid address (what the chain adapter should compare and send to). */
export function checksumEvmAddress(text: string): string {
  return getAddress(text);
}

export interface EvmKey {
  path: string;
  /** Checksummed address of index i. */
  address: string;
  /** An ethers Wallet holding the private key (not connected to a provider). Never log it. */
  wallet: Wallet;
}

/** Key material of address_in index i on the EVM family (BIP44 m/44'/60'/0'/0/i; one address per index for every EVM asset). */
export function deriveEvmWallet(seed: HdSeed, networkId: string, _mode: ChainMode, index: bigint): EvmKey {
  const path = derivationPath(networkId, index);
  const node = seed.secp256k1(path);
  // Its public key and signatures from libsecp256k1 (src/chains/evm/signing-key.ts), not ethers' pure JS.
  const wallet = nativeWallet(node.privateKey!);
  return { path, address: wallet.address, wallet };
}
