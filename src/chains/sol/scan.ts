import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { NodeUnavailableError, type ObservedDeposit, type ScannedBlock } from '../adapter';
import type { RawBlock, RawTokenBalance, RawTx } from './block-reader';
import { watchedTransactionTexts, type WatchedTexts } from './block-bytes';
import type { WatchedBytes } from './watched-bytes';

export interface SolScanContext {
  network: string;
  nativeTicker: string;
  /** SPL mint → ticker of the configured tokens. */
  mints: Map<string, string>;
}

interface TokenAccountOf {
  mint: string;
  programId?: string;
  account: string;
}

/**
 * The block's candidate deposits from its transactions' balance changes: a SOL deposit is an account whose
 * lamports rose, not a signer (signers pay fees and can only lose lamports to a deposit; index = that
 * account's position in the transaction); an SPL deposit is a token account of a configured mint whose
 * amount rose, reported to its owner (index = the token account's position). Positions are distinct
 * accounts, so identities never collide. Failed transactions move nothing.
 *
 * A vote (half of a mainnet block) or any transaction that pays no one costs one pass over its balances as
 * numbers: a bigint is made only for a rise. Comparing the doubles is what comparing their bigints was (the
 * rounding of JSON numbers keeps order).
 *
 * Only the owner's associated token account is one the gateway forwards from, and that check (a program
 * address derivation, a few curve tests) costs more than the rest of the block's reading when it is made for
 * every token balance of a busy mint. The block's `confirm` makes it for the deposits whose owner is watched,
 * which the watcher's match finds first.
 */
export function scannedBlock(block: RawBlock, slot: number, ctx: SolScanContext): ScannedBlock {
  const deposits: ObservedDeposit[] = [];
  const tokenAccounts = new Map<ObservedDeposit, TokenAccountOf>();
  const base = { network: ctx.network, blockNumber: BigInt(slot), blockHash: block.blockhash };
  const txids = new Array<string>(block.transactions.length);
  for (let t = 0; t < block.transactions.length; t++) {
    const { meta, transaction } = block.transactions[t];
    const txid = transaction.signatures[0];
    txids[t] = txid;
    if (!meta || meta.err) continue;
    const keys = transaction.accountKeys;
    const pre = meta.preBalances;
    const post = meta.postBalances;
    for (let i = 0; i < post.length; i++) {
      if (!(post[i] > pre[i])) continue;
      const key = keys[i];
      if (!key || key.signer) continue;
      deposits.push({ ...base, txid, ticker: ctx.nativeTicker, index: i, recipient: key.pubkey, amount: BigInt(post[i]) - BigInt(pre[i]) });
    }
    const postTokens = meta.postTokenBalances;
    if (!postTokens?.length) continue;
    for (const p of postTokens) {
      const ticker = ctx.mints.get(p.mint);
      if (!ticker || !p.owner) continue;
      const account = keys[p.accountIndex]?.pubkey;
      if (!account) continue;
      const delta = BigInt(p.uiTokenAmount.amount) - BigInt(preTokenAmount(meta.preTokenBalances, p.accountIndex));
      if (delta <= 0n) continue;
      const d: ObservedDeposit = { ...base, txid, ticker, index: p.accountIndex, recipient: p.owner, amount: delta };
      deposits.push(d);
      tokenAccounts.set(d, { mint: p.mint, programId: p.programId, account });
    }
  }
  const confirm = (d: ObservedDeposit): boolean => {
    const t = tokenAccounts.get(d);
    return t === undefined || isAssociatedTokenAccount(d.recipient, t);
  };
  return { height: BigInt(slot), hash: block.blockhash, deposits, txids, confirm };
}

/**
 * The block as the watcher reads it when it knows the watched addresses (`watched`, kept in memory by the
 * watcher): only the transactions that name a watched address are parsed and scanned (./block-bytes.ts), so
 * the watched deposits are the full reading's; `txids` are those transactions' only, which hold every forward
 * and sweep of the gateway (each is signed by its watched source address).
 */
export function scannedWatchedBlock(bytes: Buffer, slot: number, ctx: SolScanContext, watched: WatchedBytes): ScannedBlock {
  return scannedBlock(watchedBlock(watchedTransactionTexts(bytes, watched)), slot, ctx);
}

/** The block of the transactions that name a watched address, parsed from their texts. */
export function watchedBlock({ blockhash, txs }: WatchedTexts): RawBlock {
  if (blockhash === null) throw new NodeUnavailableError('getBlock: an answer without a block');
  return { blockhash, transactions: txs.map((t) => JSON.parse(t) as RawTx) };
}

function preTokenAmount(pre: RawTokenBalance[] | null | undefined, accountIndex: number): string {
  if (pre) for (const p of pre) if (p.accountIndex === accountIndex) return p.uiTokenAmount.amount;
  return '0';
}

function isAssociatedTokenAccount(owner: string, t: TokenAccountOf): boolean {
  try {
    const ata = getAssociatedTokenAddressSync(new PublicKey(t.mint), new PublicKey(owner), false, t.programId ? new PublicKey(t.programId) : undefined);
    return ata.toBase58() === t.account;
  } catch {
    return false; // an off-curve owner (a program account) is never an address_in
  }
}
