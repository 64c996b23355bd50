import { Keypair, PublicKey } from '@solana/web3.js';
import type { ChainMode } from '../config';
import { derivationPath, type HdSeed } from '../keys';

/**
 * A Solana payout address: base58 of exactly 32 bytes that is a point on the ed25519 curve, i.e. a
 * wallet key someone can sign for. Off-curve addresses (program-derived addresses, and so every
 * associated token account) are refused: for SPL assets the gateway pays the owner's associated token
 * account, and a merchant pasting a token-account address as owner would lose the funds.
 */
export function validateSolAddress(text: string): boolean {
  if (typeof text !== 'string' || text.length < 32 || text.length > 44) return false;
  let key: PublicKey;
  try {
    key = new PublicKey(text);
  } catch {
    return false;
  }
  // new PublicKey also accepts non-canonical spellings (e.g. leading '1's that decode to the same bytes).
  if (key.toBase58() !== text) return false;
  return PublicKey.isOnCurve(key.toBytes());
}

export interface SolKey {
  path: string;
  /** base58 address of index i. */
  address: string;
  /** The signing keypair. Never log it. */
  keypair: Keypair;
}

/** Key material of address_in index i (SLIP-10 ed25519, m/44'/501'/i'/0', the path Solana wallets use). */
export function deriveSolKeypair(seed: HdSeed, networkId: string, _mode: ChainMode, index: bigint): SolKey {
  const path = derivationPath(networkId, index);
  const keypair = Keypair.fromSeed(seed.ed25519(path));
  return { path, address: keypair.publicKey.toBase58(), keypair };
}
