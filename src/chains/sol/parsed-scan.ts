import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { PublicKey, type Connection, type ParsedTransactionWithMeta } from '@solana/web3.js';
import type { ObservedDeposit, ScannedBlock } from '../adapter';

/**
 * The watcher's former reading of a Solana block through web3.js (getParsedBlock, full transactions, an
 * associated-token-address derivation for every token balance that rose). Not on the watcher's path any
 * more (./scan.ts is); kept as the reference the fast reading is checked against on real blocks
 * (test/chains/sol-scan.test.ts) and measured against (bench/mainnet-density.ts --old).
 */
export async function readParsedBlock(
  connection: Connection,
  slot: number,
  ctx: { network: string; nativeTicker: string; mints: Map<string, string> },
): Promise<ScannedBlock | null> {
  // jsonParsed: surfnet answers account keys in the parsed shape whatever the encoding asked for.
  const b = await connection.getParsedBlock(slot, { maxSupportedTransactionVersion: 0, transactionDetails: 'full', rewards: false, commitment: 'confirmed' });
  if (!b) return null;
  const txCtx = { ...ctx, slot: BigInt(slot), blockhash: b.blockhash };
  return {
    height: BigInt(slot),
    hash: b.blockhash,
    deposits: b.transactions.flatMap((tx) => depositsOfTx(tx as unknown as BlockTx, txCtx)),
    txids: b.transactions.map((tx) => tx.transaction.signatures[0]),
  };
}

type BlockTx = Pick<ParsedTransactionWithMeta, 'meta' | 'transaction'>;

/**
 * Deposits of one successful transaction from its balance changes: a SOL deposit is an account whose
 * lamports rose (index = that account's position in the transaction); an SPL deposit is an associated
 * token account of a configured mint whose token amount rose, reported to its owner (index = the token
 * account's position). Positions are distinct accounts, so identities never collide.
 */
function depositsOfTx(
  tx: BlockTx,
  ctx: { network: string; nativeTicker: string; mints: Map<string, string>; slot: bigint; blockhash: string },
): ObservedDeposit[] {
  const meta = tx.meta;
  if (!meta || meta.err) return [];
  // jsonParsed account keys already include the ones loaded from lookup tables, in index order.
  const keys = tx.transaction.message.accountKeys;
  const txid = tx.transaction.signatures[0];
  const out: ObservedDeposit[] = [];
  const base = { network: ctx.network, txid, blockNumber: ctx.slot, blockHash: ctx.blockhash };
  for (let i = 0; i < meta.postBalances.length; i++) {
    // Signers pay fees and can only lose lamports to a deposit; a rise elsewhere is a payment.
    const key = keys[i];
    if (!key || key.signer) continue;
    const delta = BigInt(meta.postBalances[i]) - BigInt(meta.preBalances[i]);
    if (delta > 0n) out.push({ ...base, ticker: ctx.nativeTicker, index: i, recipient: key.pubkey.toBase58(), amount: delta });
  }
  for (const post of meta.postTokenBalances ?? []) {
    const ticker = ctx.mints.get(post.mint);
    if (!ticker || !post.owner) continue;
    const pre = (meta.preTokenBalances ?? []).find((p) => p.accountIndex === post.accountIndex);
    const delta = BigInt(post.uiTokenAmount.amount) - BigInt(pre?.uiTokenAmount.amount ?? '0');
    const account = keys[post.accountIndex]?.pubkey;
    if (delta <= 0n || !account) continue;
    // Only the owner's associated token account is one the gateway can forward from.
    let ata: PublicKey;
    try {
      ata = getAssociatedTokenAddressSync(new PublicKey(post.mint), new PublicKey(post.owner), false, post.programId ? new PublicKey(post.programId) : undefined);
    } catch {
      continue; // an off-curve owner (a program account) is never an address_in
    }
    if (!ata.equals(account)) continue;
    out.push({ ...base, ticker, index: post.accountIndex, recipient: post.owner, amount: delta });
  }
  return out;
}
