import { Keypair, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { ChainMode } from '../config';
import { derivationPath, type HdSeed } from '../keys';
import { ed25519PublicKey } from './ed25519';

/**
 * Addresses that are on the curve (or would be accepted otherwise) but that no one can spend from: the
 * native programs, the loaders, every sysvar, the token programs and their well-known mints, the memo
 * programs and the incinerator (the burn address). Forwarding SOL or tokens to any of them loses the funds.
 * The list covers the off-curve ones too, so that a change of the curve rule never lets them in.
 */
export const UNSPENDABLE_SOL_ADDRESSES: ReadonlySet<string> = new Set([
  // native programs and loaders
  '11111111111111111111111111111111', // System Program
  'Stake11111111111111111111111111111111111111',
  'StakeConfig11111111111111111111111111111111',
  'Vote111111111111111111111111111111111111111',
  'Config1111111111111111111111111111111111111',
  'ComputeBudget111111111111111111111111111111',
  'AddressLookupTab1e1111111111111111111111111',
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
  'Secp256r1SigVerify1111111111111111111111111',
  'ZkTokenProof1111111111111111111111111111111',
  'ZkE1Gama1Proof11111111111111111111111111111',
  'Feature111111111111111111111111111111111111',
  'NativeLoader1111111111111111111111111111111',
  'BPFLoader1111111111111111111111111111111111',
  'BPFLoader2111111111111111111111111111111111',
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'LoaderV411111111111111111111111111111111111',
  // sysvars and the sysvar owner
  'Sysvar1111111111111111111111111111111111111',
  'SysvarC1ock11111111111111111111111111111111',
  'SysvarEpochSchedu1e111111111111111111111111',
  'SysvarEpochRewards1111111111111111111111111',
  'SysvarFees111111111111111111111111111111111',
  'Sysvar1nstructions1111111111111111111111111',
  'SysvarLastRestartS1ot1111111111111111111111',
  'SysvarRecentB1ockHashes11111111111111111111',
  'SysvarRent111111111111111111111111111111111',
  'SysvarRewards111111111111111111111111111111',
  'SysvarS1otHashes111111111111111111111111111',
  'SysvarS1otHistory11111111111111111111111111',
  'SysvarStakeHistory1111111111111111111111111',
  // token programs, their native mints, memo programs, the burn address
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
  'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL',
  'So11111111111111111111111111111111111111112',
  '9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP',
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
  '1nc1nerator11111111111111111111111111111111',
]);

/**
 * A Solana payout address: base58 of exactly 32 bytes that is a point on the ed25519 curve, i.e. a
 * wallet key someone can sign for, and none of the well-known program, sysvar or burn addresses above.
 * Off-curve addresses (program-derived addresses, and so every associated token account) are refused:
 * for SPL assets the gateway pays the owner's associated token account, and a merchant pasting a
 * token-account address as owner would lose the funds.
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
  if (UNSPENDABLE_SOL_ADDRESSES.has(text)) return false;
  return PublicKey.isOnCurve(key.toBytes());
}

export interface SolKey {
  path: string;
  /** base58 address of index i. */
  address: string;
  /** The signing keypair. Never log it. */
  keypair: Keypair;
}

/** address_in of index i, the address deriveSolKeypair gives, without building the signing keypair. */
export function deriveSolAddress(seed: HdSeed, networkId: string, _mode: ChainMode, index: bigint): string {
  return bs58.encode(ed25519PublicKey(seed.ed25519(derivationPath(networkId, index))));
}

/** Key material of address_in index i (SLIP-10 ed25519, m/44'/501'/i'/0', the path Solana wallets use). */
export function deriveSolKeypair(seed: HdSeed, networkId: string, _mode: ChainMode, index: bigint): SolKey {
  const path = derivationPath(networkId, index);
  const keypair = Keypair.fromSeed(seed.ed25519(path));
  return { path, address: keypair.publicKey.toBase58(), keypair };
}
