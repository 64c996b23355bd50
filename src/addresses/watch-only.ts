import { BIP32Factory } from 'bip32';
import { computeAddress } from 'ethers';
import * as ecc from 'tiny-secp256k1';
import { NETWORKS } from '../domain/assets';
import type { ChainMode } from '../chains/config';
import { accountPath, type HdSeed } from '../chains/keys';
import { utxoAddressOfPubkey } from '../chains/utxo/address';
import { utxoNetwork } from '../chains/utxo/networks';

const bip32 = BIP32Factory(ecc);

/**
 * What the internet-facing API derives deposit addresses from (DESIGN 9): the account-level extended
 * public key of every BIP32 network. It cannot sign; the seed stays in the worker. Solana has no public
 * derivation, so its addresses come from a pool the worker fills (src/db/queries/address-pool.ts).
 */
export interface PublicKeys {
  /** network id → xpub of accountPath(network). */
  xpubs: Record<string, string>;
}

/** Public material of every BIP32 network of the registry, from the seed (worker side only). */
export function exportPublicKeys(seed: HdSeed): PublicKeys {
  const xpubs: Record<string, string> = {};
  for (const [id, net] of Object.entries(NETWORKS)) if (net.family !== 'sol') xpubs[id] = seed.accountXpub(accountPath(id));
  return { xpubs };
}

/** Whether a network's deposit addresses derive from public material (else: the Solana pool). */
export const hasPublicDerivation = (networkId: string) => NETWORKS[networkId]?.family !== 'sol';

/**
 * address_in of index i from the account xpub: the same address the worker derives from the seed to sign
 * the forward (P2WPKH for btc/ltc, CashAddr P2PKH for bch, P2PKH for doge/zec, EIP-55 for EVM).
 */
export function watchOnlyAddressIn(keys: PublicKeys, networkId: string, mode: ChainMode, index: bigint): string {
  const xpub = keys.xpubs[networkId];
  if (!xpub) throw new Error(`no public key published for ${networkId}`);
  if (index < 0n || index >= 2n ** 31n) throw new RangeError(`derivation index out of range: ${index}`);
  const publicKey = bip32.fromBase58(xpub).derive(0).derive(Number(index)).publicKey;
  if (NETWORKS[networkId].family === 'evm') return computeAddress(`0x${Buffer.from(publicKey).toString('hex')}`);
  return utxoAddressOfPubkey(utxoNetwork(networkId, mode), Uint8Array.from(publicKey));
}
