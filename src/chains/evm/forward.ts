import { Transaction, type JsonRpcProvider, type Wallet } from 'ethers';
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
  return { role, raw, txid: Transaction.from(raw).hash! };
}

const nonceOf = (ctx: ForwardContext, address: string) => ctx.provider.getTransactionCount(address, 'pending');

/**
 * ETH: address_in sends deposit − commission − worst-case gas to address_out. The gas withheld is the
 * maximum the transaction may burn; what it does not burn stays at address_in.
 */
export async function prepareEthForward(ctx: ForwardContext, source: Wallet, req: ForwardRequest): Promise<ForwardPlan> {
  const fees = await eip1559Fees(ctx.provider, req.priority);
  const code = await ctx.provider.getCode(req.addressOut);
  // A contract payout address may need more than a plain transfer; estimate it, with headroom.
  const gasLimit =
    code === '0x'
      ? ETH_TRANSFER_GAS
      : ((await ctx.provider.estimateGas({ from: source.address, to: req.addressOut, value: 1n })) * 125n) / 100n;
  const networkFee = gasLimit * fees.maxFeePerGas;
  const forwarded = req.deposit.amount - networkFee - (req.commission ?? 0n);
  if (forwarded <= 0n) throw new InsufficientAmountError(`deposit ${req.deposit.amount} does not cover gas ${networkFee}`);
  const tx = await sign(ctx, source, 'forward', {
    to: req.addressOut,
    value: forwarded,
    gasLimit,
    ...fees,
    nonce: await nonceOf(ctx, source.address),
  });
  return { network: ctx.network, ticker: req.deposit.ticker, txs: [tx], txidOut: tx.txid, forwarded, networkFee, sponsorCost: 0n, rent: 0n };
}

/**
 * ERC-20: the gas tank first tops address_in up with exactly the ether the token transfer may burn
 * (minus what it already holds); the tank's cost (top-up value + its own gas) is reported for fee_coin.
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
  let gasLimit: bigint;
  try {
    gasLimit = ((await ctx.provider.estimateGas({ from: source.address, to: contract, data })) * 125n) / 100n;
  } catch {
    gasLimit = TOKEN_TRANSFER_GAS_FALLBACK;
  }
  const fees = await eip1559Fees(ctx.provider, req.priority);
  const need = gasLimit * fees.maxFeePerGas;
  const have = await ctx.provider.getBalance(source.address, 'pending');
  const txs: SignedTx[] = [];
  let sponsorCost = 0n;
  if (have < need) {
    const topupValue = need - have;
    txs.push(
      await sign(ctx, tank, 'gas-topup', {
        to: source.address,
        value: topupValue,
        gasLimit: ETH_TRANSFER_GAS,
        ...fees,
        nonce: await nonceOf(ctx, tank.address),
      }),
    );
    sponsorCost = topupValue + ETH_TRANSFER_GAS * fees.maxFeePerGas;
  }
  const forward = await sign(ctx, source, 'forward', { to: contract, value: 0n, data, gasLimit, ...fees, nonce: await nonceOf(ctx, source.address) });
  txs.push(forward);
  return { network: ctx.network, ticker: req.deposit.ticker, txs, txidOut: forward.txid, forwarded, networkFee: 0n, sponsorCost, rent: 0n };
}
