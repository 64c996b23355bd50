import { ASSETS } from '../../domain/assets';
import { Contract, keccak256, type JsonRpcProvider, type Wallet } from 'ethers';
import { InsufficientAmountError, type ForwardPlan, type ObservedDeposit, type SweepRequest } from '../adapter';
import { ERC20 } from './erc20';
import { ETH_TRANSFER_GAS, eip1559Fees } from './fees';
import { prepareTokenForward, type ForwardContext } from './forward';

/** An address's balance of ether (no contract) or of an ERC-20 token (its contract), at a block (default the latest). */
export async function evmBalance(provider: JsonRpcProvider, address: string, contract?: string, block?: bigint): Promise<bigint> {
  const blockTag = block === undefined ? 'latest' : Number(block);
  if (!contract) return provider.getBalance(address, blockTag);
  return (await new Contract(contract, ERC20, provider).getFunction('balanceOf')(address, { blockTag })) as bigint;
}

const least = (a: bigint, b?: bigint) => (b !== undefined && b < a ? b : a);

/**
 * ETH: the whole balance less the most the transfer may burn. What the block's base fee does not take of
 * that maximum stays at the source (below one transfer's cost, so a sweep run again finds nothing to move).
 */
export async function prepareEthSweep(ctx: ForwardContext, source: Wallet, req: SweepRequest): Promise<ForwardPlan> {
  const [fees, code, balance, pending] = await Promise.all([
    eip1559Fees(ctx.provider, 'default', { fresh: true }),
    ctx.provider.getCode(req.destination),
    evmBalance(ctx.provider, source.address),
    ctx.provider.getTransactionCount(source.address, 'pending'),
  ]);
  const nonce = Math.max(pending, req.nonceFloor ?? 0);
  const gasLimit =
    code === '0x' ? ETH_TRANSFER_GAS : ((await ctx.provider.estimateGas({ from: source.address, to: req.destination, value: 1n })) * 125n) / 100n;
  const networkFee = gasLimit * fees.maxFeePerGas;
  const amount = least(balance, req.maxBalance) - networkFee;
  if (amount <= 0n) throw new InsufficientAmountError(`balance ${balance} does not cover gas ${networkFee}`);
  const raw = await source.signTransaction({ type: 2, chainId: ctx.chainId, to: req.destination, value: amount, gasLimit, ...fees, nonce, data: '0x' });
  const txid = keccak256(raw);
  return { network: ctx.network, ticker: req.ticker, txs: [{ role: 'forward', raw, txid }], txidOut: txid, forwarded: amount, networkFee, sponsorCost: 0n, rent: 0n, nonce };
}

/** ERC-20: the token forward's own path (a gas top-up from the tank, then the transfer) for the whole balance. */
export async function prepareTokenSweep(ctx: ForwardContext, source: Wallet, tank: Wallet, contract: string, req: SweepRequest): Promise<ForwardPlan> {
  const balance = least(await evmBalance(ctx.provider, source.address, contract), req.maxBalance);
  if (balance <= 0n) throw new InsufficientAmountError(`no ${req.ticker} at ${source.address}`);
  const deposit: ObservedDeposit = { network: ctx.network, ticker: req.ticker, txid: 'sweep', index: 0, recipient: source.address, amount: balance, blockNumber: 0n, blockHash: '' };
  return prepareTokenForward(ctx, source, tank, contract, {
    deposit, derivationIndex: req.derivationIndex, addressOut: req.destination, priority: 'default', commission: 0n, nonceFloor: req.nonceFloor,
  }, ASSETS[req.ticker]);
}
