import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { PublicKey, SystemProgram, Transaction, type Connection } from '@solana/web3.js';
import bs58 from 'bs58';
import { InsufficientAmountError, type ForwardPlan, type ObservedDeposit, type SweepRequest } from '../adapter';
import { serializeVerified } from './ed25519';
import { LAMPORTS_PER_SIGNATURE, prepareSplForward, type SolForwardContext } from './forward';

/** An address's lamports (no mint) or its balance of an SPL token in its associated token account (0 without one). */
export async function solBalance(connection: Connection, address: string, mint?: string): Promise<bigint> {
  const owner = new PublicKey(address);
  if (!mint) return BigInt(await connection.getBalance(owner, 'confirmed'));
  const ata = getAssociatedTokenAddressSync(new PublicKey(mint), owner);
  if (!(await connection.getAccountInfo(ata, 'confirmed'))) return 0n;
  return BigInt((await connection.getTokenAccountBalance(ata, 'confirmed')).value.amount);
}

/**
 * The balance now, when no transaction touched the account (the address, or its token account) after slot
 * `seenUpTo`; else null. The balance is read first: its transactions are then in the signature list read after.
 */
export async function solBalanceSeen(connection: Connection, address: string, seenUpTo: bigint, mint?: string): Promise<bigint | null> {
  const owner = new PublicKey(address);
  const account = mint ? getAssociatedTokenAddressSync(new PublicKey(mint), owner) : owner;
  const balance = await solBalance(connection, address, mint);
  if (balance === 0n) return 0n;
  const recent = await connection.getSignaturesForAddress(account, { limit: 1 }, 'confirmed');
  return recent.some((s) => BigInt(s.slot) > seenUpTo) ? null : balance;
}

/**
 * SOL: every lamport less the fee, so the account closes: nothing below rent-exemption can stay behind
 * (the runtime refuses a transfer that would leave that).
 */
export async function prepareSolSweep(ctx: SolForwardContext, req: SweepRequest): Promise<ForwardPlan> {
  const [{ blockhash, lastValidBlockHeight }, balance] = await Promise.all([
    ctx.connection.getLatestBlockhash('confirmed'),
    solBalance(ctx.connection, ctx.source.publicKey.toBase58()),
  ]);
  const networkFee = LAMPORTS_PER_SIGNATURE;
  // The whole balance or nothing: a balance that grew since it was checked holds what the watcher has not read.
  if (req.maxBalance !== undefined && balance > req.maxBalance) throw new InsufficientAmountError(`balance ${balance} grew since it was checked (${req.maxBalance})`);
  const amount = balance - networkFee;
  if (amount <= 0n) throw new InsufficientAmountError(`balance ${balance} does not cover the fee ${networkFee}`);
  const tx = new Transaction({ feePayer: ctx.source.publicKey, blockhash, lastValidBlockHeight }).add(
    SystemProgram.transfer({ fromPubkey: ctx.source.publicKey, toPubkey: new PublicKey(req.destination), lamports: amount }),
  );
  tx.sign(ctx.source);
  const raw = serializeVerified(tx).toString('hex');
  const txid = bs58.encode(tx.signature!);
  return { network: ctx.network, ticker: req.ticker, txs: [{ role: 'forward', raw, txid }], txidOut: txid, forwarded: amount, networkFee, sponsorCost: 0n, rent: 0n, lastValidBlockHeight };
}

/** SPL: the token forward's own path (the fee payer pays, and the destination's token account if it has none) for the whole balance. */
export async function prepareSplSweep(ctx: SolForwardContext, mint: string, req: SweepRequest): Promise<ForwardPlan> {
  const now = await solBalance(ctx.connection, req.source, mint);
  const balance = req.maxBalance !== undefined && req.maxBalance < now ? req.maxBalance : now;
  if (balance <= 0n) throw new InsufficientAmountError(`no ${req.ticker} at ${req.source}`);
  const deposit: ObservedDeposit = { network: ctx.network, ticker: req.ticker, txid: 'sweep', index: 0, recipient: req.source, amount: balance, blockNumber: 0n, blockHash: '' };
  return prepareSplForward(ctx, mint, { deposit, derivationIndex: req.derivationIndex, addressOut: req.destination, priority: 'default', commission: 0n });
}
