import { keccak256, type JsonRpcProvider, type Wallet } from 'ethers';
import { InsufficientAmountError, InvalidRequestError, type ForwardPlan, type ForwardRequest, type SignedTx } from '../adapter';
import type { Asset } from '../../domain/assets';
import { nativeCostInAsset } from '../../domain/network-cost';
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
 * Ether at address_in this forward may burn as gas: none while anything of the source is in flight (an
 * earlier forward, stored or in the mempool, may still burn it), and never what deposits of the native
 * coin still on record there need (`reserved`, from the caller's ledger).
 */
async function spareGas(ctx: ForwardContext, address: string, floor: number, reserved: bigint): Promise<bigint> {
  const [mined, pending, balance] = await Promise.all([
    ctx.provider.getTransactionCount(address, 'latest'),
    nonceOf(ctx, address),
    ctx.provider.getBalance(address, 'latest'),
  ]);
  if (pending !== mined || floor > mined) return 0n;
  return balance > reserved ? balance - reserved : 0n;
}

/**
 * ERC-20: the gas tank first tops address_in up with the ether the token transfer may burn, less the
 * spare ether already there (spareGas; only with `nativeReserved`, else every forward brings its full
 * top-up). The tank's cost (top-up value + its own gas; nothing without a top-up) is the plan's
 * sponsorCost; with `sponsorPrice` it is converted into the token and withheld beside the commission.
 */
export async function prepareTokenForward(
  ctx: ForwardContext,
  source: Wallet,
  tank: Wallet,
  contract: string,
  req: ForwardRequest,
  asset: Asset,
): Promise<ForwardPlan> {
  const commission = req.commission ?? 0n;
  if (req.deposit.amount - commission <= 0n) throw new InsufficientAmountError('commission exceeds the deposit');
  if (tank.address === source.address) throw new InvalidRequestError('gas tank cannot be an address_in');
  // Gas is estimated for the largest amount the transfer may carry; a smaller one costs the same.
  const probe = ERC20.encodeFunctionData('transfer', [req.addressOut, req.deposit.amount - commission]);
  const [gasLimit, fees, nonce] = await Promise.all([
    ctx.provider
      .estimateGas({ from: source.address, to: contract, data: probe })
      .then((g) => (g * 125n) / 100n)
      .catch(() => TOKEN_TRANSFER_GAS_FALLBACK),
    eip1559Fees(ctx.provider, req.priority),
    sourceNonce(ctx, source.address, req.nonceFloor),
  ]);
  const spare = req.nativeReserved === undefined ? 0n : await spareGas(ctx, source.address, req.nonceFloor ?? 0, req.nativeReserved);
  const need = gasLimit * fees.maxFeePerGas;
  const txs: SignedTx[] = [];
  let sponsorCost = 0n;
  if (spare < need) {
    // Each forward's top-up is a transaction of its own: two plans of one address signed while the tank's
    // nonce stood still would otherwise sign byte-identical top-ups, one mined transfer funding two forwards.
    // The forward's nonce in the last wei keeps them apart.
    const value = need - spare + BigInt(nonce);
    // Signed now for the record; sent (or signed again at the tank's next nonce) under the tank's lock.
    txs.push(await sign(ctx, tank, 'gas-topup', { to: source.address, value, gasLimit: ETH_TRANSFER_GAS, ...fees, nonce: await nonceOf(ctx, tank.address) }));
    sponsorCost = value + ETH_TRANSFER_GAS * fees.maxFeePerGas;
  }
  const recovered = req.sponsorPrice ? nativeCostInAsset(asset, sponsorCost, req.sponsorPrice) : 0n;
  const forwarded = req.deposit.amount - commission - recovered;
  if (forwarded <= 0n) throw new InsufficientAmountError('commission and network cost exceed the deposit');
  const data = ERC20.encodeFunctionData('transfer', [req.addressOut, forwarded]);
  const forward = await sign(ctx, source, 'forward', { to: contract, value: 0n, data, gasLimit, ...fees, nonce });
  txs.push(forward);
  return { network: ctx.network, ticker: req.deposit.ticker, txs, txidOut: forward.txid, forwarded, networkFee: 0n, sponsorCost, rent: 0n, nonce };
}
