import { keccak256, type JsonRpcProvider, type Wallet } from 'ethers';
import { InsufficientAmountError, InvalidRequestError, type ForwardPlan, type ForwardRequest, type SignedTx } from '../adapter';
import { ERC20 } from './erc20';
import { ETH_TRANSFER_GAS, TOKEN_TRANSFER_GAS_FALLBACK, eip1559Fees } from './fees';

export interface ForwardContext {
  provider: JsonRpcProvider;
  chainId: bigint;
  network: string;
}

async function sign(
  ctx: ForwardContext,
  from: Wallet,
  role: SignedTx['role'],
  tx: { to: string; value: bigint; data?: string; gasLimit: bigint; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint; nonce: number },
): Promise<SignedTx> {
  const raw = await from.signTransaction({ type: 2, chainId: ctx.chainId, ...tx, data: tx.data ?? '0x' });
  // A typed transaction's hash is the keccak of its signed bytes (what Transaction.from(raw).hash
  // computes after decoding and encoding them again).
  return { role, raw, txid: keccak256(raw) };
}

const nonceOf = (ctx: ForwardContext, address: string) => ctx.provider.getTransactionCount(address, 'pending');

/** The source's next nonce: the node's pending count, but never one a stored forward still holds. */
async function sourceNonce(ctx: ForwardContext, address: string, floor = 0): Promise<number> {
  const pending = await nonceOf(ctx, address);
  return pending > floor ? pending : floor;
}

/**
 * ETH: address_in sends deposit − commission − worst-case gas to address_out. The gas withheld is the
 * maximum the transaction may burn; what it does not burn stays at address_in.
 */
export async function prepareEthForward(ctx: ForwardContext, source: Wallet, req: ForwardRequest): Promise<ForwardPlan> {
  const [fees, code, nonce] = await Promise.all([
    eip1559Fees(ctx.provider, req.priority),
    ctx.provider.getCode(req.addressOut),
    sourceNonce(ctx, source.address, req.nonceFloor),
  ]);
  // A contract payout address may need more than a plain transfer; estimate it, with headroom.
  const gasLimit =
    code === '0x'
      ? ETH_TRANSFER_GAS
      : ((await ctx.provider.estimateGas({ from: source.address, to: req.addressOut, value: 1n })) * 125n) / 100n;
  const networkFee = gasLimit * fees.maxFeePerGas;
  const forwarded = req.deposit.amount - networkFee - (req.commission ?? 0n);
  if (forwarded <= 0n) throw new InsufficientAmountError(`deposit ${req.deposit.amount} does not cover gas ${networkFee}`);
  const tx = await sign(ctx, source, 'forward', { to: req.addressOut, value: forwarded, gasLimit, ...fees, nonce });
  return { network: ctx.network, ticker: req.deposit.ticker, txs: [tx], txidOut: tx.txid, forwarded, networkFee, sponsorCost: 0n, rent: 0n, nonce };
}

/**
 * ERC-20: the gas tank first tops address_in up with the ether the token transfer may burn; the tank's
 * cost (top-up value + its own gas) is reported for fee_coin. Every token forward brings its own full
 * top-up: ether already at address_in may belong to an earlier forward still in the mempool, so it is
 * never counted (what a forward does not burn stays at address_in, the operator's).
 */
export async function prepareTokenForward(
  ctx: ForwardContext,
  source: Wallet,
  tank: Wallet,
  contract: string,
  req: ForwardRequest,
): Promise<ForwardPlan> {
  const forwarded = req.deposit.amount - (req.commission ?? 0n);
  if (forwarded <= 0n) throw new InsufficientAmountError('commission exceeds the deposit');
  if (tank.address === source.address) throw new InvalidRequestError('gas tank cannot be an address_in');
  const data = ERC20.encodeFunctionData('transfer', [req.addressOut, forwarded]);
  const [gasLimit, fees, nonce] = await Promise.all([
    ctx.provider
      .estimateGas({ from: source.address, to: contract, data })
      .then((g) => (g * 125n) / 100n)
      .catch(() => TOKEN_TRANSFER_GAS_FALLBACK),
    eip1559Fees(ctx.provider, req.priority),
    sourceNonce(ctx, source.address, req.nonceFloor),
  ]);
  const need = gasLimit * fees.maxFeePerGas;
  // Each forward's top-up is a transaction of its own: two plans of one address signed while the tank's
  // nonce stood still would otherwise sign byte-identical top-ups, one mined transfer funding two forwards.
  // The forward's nonce in the last wei keeps them apart.
  const value = need + BigInt(nonce);
  // Signed now for the record; sent (or signed again at the tank's next nonce) under the tank's lock.
  const topup = await sign(ctx, tank, 'gas-topup', { to: source.address, value, gasLimit: ETH_TRANSFER_GAS, ...fees, nonce: await nonceOf(ctx, tank.address) });
  const sponsorCost = value + ETH_TRANSFER_GAS * fees.maxFeePerGas;
  const forward = await sign(ctx, source, 'forward', { to: contract, value: 0n, data, gasLimit, ...fees, nonce });
  return { network: ctx.network, ticker: req.deposit.ticker, txs: [topup, forward], txidOut: forward.txid, forwarded, networkFee: 0n, sponsorCost, rent: 0n, nonce };
}
