import { computeAddress, hexlify } from 'ethers';
import { Keypair } from '@solana/web3.js';
import type { HdSeed } from './keys';
import { publicKeyOf } from './secp256k1';

/**
 * The gas tank (EVM) and fee payer (Solana) are accounts of the operator's HD seed on paths no
 * address_in ever uses, so no extra secret is configured: the operator funds the printed address.
 * address_in uses m/44'/60'/0'/0/i and m/44'/501'/i'/0'; these use account 1 / change 1.
 */
export const GAS_TANK_PATHS = {
  evm: "m/44'/60'/1'/0/0",
  sol: "m/44'/501'/0'/1'",
} as const;

export function evmGasTankKey(seed: HdSeed): Uint8Array {
  const node = seed.secp256k1(GAS_TANK_PATHS.evm);
  if (!node.privateKey) throw new Error('gas tank key has no private part');
  return node.privateKey;
}

export function solFeePayerSeed(seed: HdSeed): Uint8Array {
  return seed.ed25519(GAS_TANK_PATHS.sol);
}

/** The addresses an operator funds: ether for ERC-20 forwards, SOL for SPL forwards. */
export function sponsorAddresses(seed: HdSeed): { evmGasTank: string; solFeePayer: string } {
  return {
    // From its public key (libsecp256k1): ethers computes that in pure JS, a fifth of a second at start here.
    evmGasTank: computeAddress(hexlify(publicKeyOf(evmGasTankKey(seed), false))),
    solFeePayer: Keypair.fromSeed(solFeePayerSeed(seed)).publicKey.toBase58(),
  };
}
