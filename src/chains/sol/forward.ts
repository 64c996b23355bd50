import {
  ACCOUNT_SIZE,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { SystemProgram, Transaction, PublicKey, type Connection, type Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { ASSETS } from '../../domain/assets';
import { nativeCostInAsset } from '../../domain/network-cost';
import { serializeVerified } from './ed25519';
import {
  InsufficientAmountError,
  InvalidRequestError,
  NodeUnavailableError,
  type ForwardPlan,
  type ForwardRequest,
} from '../adapter';
import {
  LAMPORTS_PER_SIGNATURE,
  SOL_FORWARD_UNITS,
  SPL_FORWARD_UNITS,
  SPL_FORWARD_WITH_ACCOUNT_UNITS,
  balanceOf,
  budgetInstructions,
  priorityFeeLamports,
  priorityPrice,
  rentExemptMinimum,
} from './fees';

export { LAMPORTS_PER_SIGNATURE } from './fees';

export interface SolForwardContext {
  connection: Connection;
  network: string;
  source: Keypair;
  feePayer: Keypair;
  /** The operator's cap on the compute-unit price, micro-lamports. */
  priorityFeeMax: bigint;
}

function sealed(tx: Transaction, signers: Keypair[]) {
  tx.sign(...signers);
  const raw = serializeVerified(tx).toString('hex');
  return { raw, txid: bs58.encode(tx.signature!) };
}

/** getLatestBlockhash wraps every failure in a plain Error; its AndContext form keeps the typed one. */
async function latestBlockhash(connection: Connection) {
  return (await connection.getLatestBlockhashAndContext('confirmed')).value;
}

/**
 * Where a commission too small to stay at address_in goes: the treasury when it is (or the commission
 * makes it) rent-exempt, else the fee payer when it is; undefined when neither can take it (then it is
 * waived into the forward).
 */
async function commissionDestination(ctx: SolForwardContext, req: ForwardRequest, lamports: bigint, rentMin: bigint): Promise<PublicKey | undefined> {
  const source = ctx.source.publicKey;
  const candidates: PublicKey[] = [];
  if (req.treasuryAddress && req.treasuryAddress !== req.addressOut) candidates.push(new PublicKey(req.treasuryAddress));
  candidates.push(ctx.feePayer.publicKey);
  for (const to of candidates) {
    if (to.equals(source)) continue;
    if ((await balanceOf(ctx.connection, to)) + lamports >= rentMin) return to;
  }
  return undefined;
}

/**
 * SOL: address_in pays its own fee (base + priority) and sends the deposit minus that fee and the
 * commission to address_out. The commission stays at address_in, unless what would stay there is below
 * the rent-exempt minimum (the runtime refuses a transfer that leaves that): then the same transaction
 * sends it to the treasury or the fee payer, or it is waived into the forward. Only this deposit's
 * commission ever moves: anything else at address_in keeps the account above the minimum.
 */
export async function prepareSolForward(ctx: SolForwardContext, req: ForwardRequest): Promise<ForwardPlan> {
  const source = ctx.source.publicKey;
  const out = new PublicKey(req.addressOut);
  const [latest, balance, outBalance, rentMin, price] = await Promise.all([
    latestBlockhash(ctx.connection),
    balanceOf(ctx.connection, source),
    balanceOf(ctx.connection, out),
    rentExemptMinimum(ctx.connection, 0),
    priorityPrice(ctx.connection, [source, out], req.priority, ctx.priorityFeeMax),
  ]);
  const networkFee = LAMPORTS_PER_SIGNATURE + priorityFeeLamports(SOL_FORWARD_UNITS, price);
  const commission = req.commission ?? 0n;
  let forwarded = req.deposit.amount - networkFee - commission;
  if (forwarded <= 0n) throw new InsufficientAmountError(`deposit ${req.deposit.amount} does not cover the fee ${networkFee} and commission ${commission}`);
  const left = balance - forwarded - networkFee;
  // A balance short of the deposit is a node that does not show it yet: a reading to wait out.
  if (left < 0n) throw new NodeUnavailableError('address_in balance does not show the deposit yet');
  let moved: { to: PublicKey; lamports: bigint } | undefined;
  if (left > 0n && left < rentMin) {
    // Below the minimum, what stays is this commission and at most lamports below the minimum themselves
    // (a deposit under every published minimum). Those are not this deposit's to move: the forward waits,
    // its reason visible, for the operator.
    if (left > commission) {
      throw new NodeUnavailableError(`address_in holds ${left - commission} lamports besides this deposit, below the rent-exempt minimum with its commission; not moving them`);
    }
    const to = await commissionDestination(ctx, req, left, rentMin);
    if (to) moved = { to, lamports: left };
    else forwarded += left;
  }
  if (outBalance === 0n && forwarded < rentMin) {
    throw new InsufficientAmountError(`forward of ${forwarded} lamports is below the rent-exempt minimum ${rentMin} of a new address_out`);
  }
  const tx = new Transaction({ feePayer: source, ...latest }).add(
    ...budgetInstructions(SOL_FORWARD_UNITS, price),
    SystemProgram.transfer({ fromPubkey: source, toPubkey: out, lamports: forwarded }),
  );
  if (moved) tx.add(SystemProgram.transfer({ fromPubkey: source, toPubkey: moved.to, lamports: moved.lamports }));
  const s = sealed(tx, [ctx.source]);
  return {
    network: ctx.network, ticker: req.deposit.ticker, txs: [{ role: 'forward', ...s }], txidOut: s.txid,
    forwarded, networkFee, sponsorCost: 0n, rent: 0n, lastValidBlockHeight: latest.lastValidBlockHeight,
  };
}

/**
 * SPL: the fee payer signs and pays both signatures, the priority fee and, when the merchant has no
 * token account for the mint yet, its rent. That cost (sponsorCost) is what applied to this forward:
 * with `sponsorPrice`, it is converted into the token and withheld beside the commission.
 */
export async function prepareSplForward(ctx: SolForwardContext, mint: string, req: ForwardRequest): Promise<ForwardPlan> {
  const asset = ASSETS[req.deposit.ticker];
  if (ctx.feePayer.publicKey.equals(ctx.source.publicKey)) throw new InvalidRequestError('fee payer cannot be an address_in');
  const mintKey = new PublicKey(mint);
  const owner = new PublicKey(req.addressOut);
  const ataIn = getAssociatedTokenAddressSync(mintKey, ctx.source.publicKey);
  const ataOut = getAssociatedTokenAddressSync(mintKey, owner);
  const [existing, rentMin, latest, price] = await Promise.all([
    ctx.connection.getAccountInfoAndContext(ataOut, 'confirmed').then((r) => r.value),
    rentExemptMinimum(ctx.connection, ACCOUNT_SIZE),
    latestBlockhash(ctx.connection),
    priorityPrice(ctx.connection, [ctx.feePayer.publicKey, ataIn, ataOut], req.priority, ctx.priorityFeeMax),
  ]);
  const rent = existing ? 0n : rentMin;
  const units = existing ? SPL_FORWARD_UNITS : SPL_FORWARD_WITH_ACCOUNT_UNITS;
  const sponsorCost = 2n * LAMPORTS_PER_SIGNATURE + priorityFeeLamports(units, price) + rent;
  const recovered = req.sponsorPrice ? nativeCostInAsset(asset, sponsorCost, req.sponsorPrice) : 0n;
  const forwarded = req.deposit.amount - (req.commission ?? 0n) - recovered;
  if (forwarded <= 0n) throw new InsufficientAmountError('commission and network cost exceed the deposit');
  const tx = new Transaction({ feePayer: ctx.feePayer.publicKey, ...latest }).add(...budgetInstructions(units, price));
  if (!existing) tx.add(createAssociatedTokenAccountIdempotentInstruction(ctx.feePayer.publicKey, ataOut, owner, mintKey));
  tx.add(createTransferCheckedInstruction(ataIn, mintKey, ataOut, ctx.source.publicKey, forwarded, asset.decimals));
  const s = sealed(tx, [ctx.feePayer, ctx.source]);
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
