import {
  ACCOUNT_SIZE,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { SystemProgram, Transaction, PublicKey, type Connection, type Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { ASSETS } from '../../domain/assets';
import { serializeVerified } from './ed25519';
import { InsufficientAmountError, InvalidRequestError, type ForwardPlan, type ForwardRequest } from '../adapter';

/** Lamports per signature (the base fee; the gateway adds no priority fee on Solana). */
export const LAMPORTS_PER_SIGNATURE = 5000n;

export interface SolForwardContext {
  connection: Connection;
  network: string;
  source: Keypair;
  feePayer: Keypair;
}

function sealed(tx: Transaction, signers: Keypair[]) {
  tx.sign(...signers);
  const raw = serializeVerified(tx).toString('hex');
  return { raw, txid: bs58.encode(tx.signature!) };
}

/** SOL: address_in pays its own fee and sends the rest of the deposit (minus commission) to address_out. */
export async function prepareSolForward(ctx: SolForwardContext, req: ForwardRequest): Promise<ForwardPlan> {
  const { blockhash, lastValidBlockHeight } = await ctx.connection.getLatestBlockhash('confirmed');
  const networkFee = LAMPORTS_PER_SIGNATURE;
  const forwarded = req.deposit.amount - networkFee - (req.commission ?? 0n);
  if (forwarded <= 0n) throw new InsufficientAmountError(`deposit ${req.deposit.amount} does not cover the fee ${networkFee}`);
  // What stays behind must be nothing or rent-exempt, or the runtime refuses the transfer.
  const balance = BigInt(await ctx.connection.getBalance(ctx.source.publicKey, 'confirmed'));
  const left = balance - forwarded - networkFee;
  const rentMin = BigInt(await ctx.connection.getMinimumBalanceForRentExemption(0));
  if (left < 0n || (left > 0n && left < rentMin)) {
    throw new InsufficientAmountError(`address_in would keep ${left} lamports, neither 0 nor rent-exempt (${rentMin})`);
  }
  const tx = new Transaction({ feePayer: ctx.source.publicKey, blockhash, lastValidBlockHeight }).add(
    SystemProgram.transfer({ fromPubkey: ctx.source.publicKey, toPubkey: new PublicKey(req.addressOut), lamports: forwarded }),
  );
  const s = sealed(tx, [ctx.source]);
  return { network: ctx.network, ticker: req.deposit.ticker, txs: [{ role: 'forward', ...s }], txidOut: s.txid, forwarded, networkFee, sponsorCost: 0n, rent: 0n, lastValidBlockHeight };
}

/**
 * SPL: the fee payer signs and pays both signatures and, when the merchant has no token account for
 * the mint yet, its rent; that cost is reported (sponsorCost, rent) for fee_coin.
 */
export async function prepareSplForward(ctx: SolForwardContext, mint: string, req: ForwardRequest): Promise<ForwardPlan> {
  const asset = ASSETS[req.deposit.ticker];
  const forwarded = req.deposit.amount - (req.commission ?? 0n);
  if (forwarded <= 0n) throw new InsufficientAmountError('commission exceeds the deposit');
  if (ctx.feePayer.publicKey.equals(ctx.source.publicKey)) throw new InvalidRequestError('fee payer cannot be an address_in');
  const mintKey = new PublicKey(mint);
  const owner = new PublicKey(req.addressOut);
  const ataIn = getAssociatedTokenAddressSync(mintKey, ctx.source.publicKey);
  const ataOut = getAssociatedTokenAddressSync(mintKey, owner);
  const [existing, rentMin, latest] = await Promise.all([
    ctx.connection.getAccountInfo(ataOut, 'confirmed'),
    ctx.connection.getMinimumBalanceForRentExemption(ACCOUNT_SIZE),
    ctx.connection.getLatestBlockhash('confirmed'),
  ]);
  const rent = existing ? 0n : BigInt(rentMin);
  const tx = new Transaction({ feePayer: ctx.feePayer.publicKey, ...latest });
  if (!existing) tx.add(createAssociatedTokenAccountIdempotentInstruction(ctx.feePayer.publicKey, ataOut, owner, mintKey));
  tx.add(createTransferCheckedInstruction(ataIn, mintKey, ataOut, ctx.source.publicKey, forwarded, asset.decimals));
  const s = sealed(tx, [ctx.feePayer, ctx.source]);
  const sponsorCost = 2n * LAMPORTS_PER_SIGNATURE + rent;
  return {
    network: ctx.network, ticker: req.deposit.ticker, txs: [{ role: 'forward', ...s }], txidOut: s.txid,
    forwarded, networkFee: 0n, sponsorCost, rent, lastValidBlockHeight: latest.lastValidBlockHeight,
  };
}

export function recentBlockhashOf(raw: string): string {
  return Transaction.from(Buffer.from(raw, 'hex')).recentBlockhash!;
}

/** The deposit address that signed a forward: the last signer (SOL: the only one; SPL: after the fee payer). */
export function sourceOf(raw: string): PublicKey {
  const sigs = Transaction.from(Buffer.from(raw, 'hex')).signatures;
  return sigs[sigs.length - 1].publicKey;
}
