import { Contract, JsonRpcProvider, Network, Wallet } from 'ethers';
import type { DevnetState } from '../../devnet';
import { ERC20 } from '../../src/chains/evm/erc20';

/**
 * The EVM part of the burst, as one customer paying many orders at once: every transfer (ether and
 * ERC-20, one nonce sequence) signed up front and sent together, so that they land in one or a few
 * anvil blocks. (The drill's payer sends one group at a time under a lock and reads the nonce each
 * time: 250 deposits then trickle over some 50 blocks, which is no burst.)
 */
export interface EvmPayment {
  ticker: 'eth' | 'erc20_usdt';
  to: string;
  amount: bigint;
}

export async function payEvmBurst(state: DevnetState, payments: EvmPayment[], inFlight = 16): Promise<Array<{ payment: EvmPayment; txid?: string; error?: string }>> {
  const eth = state.ethereum!;
  const net = Network.from(BigInt(eth.chainId));
  const provider = new JsonRpcProvider(eth.rpcUrl, net, { staticNetwork: net, cacheTimeout: -1 });
  try {
    const customer = new Wallet(eth.customerKey, provider);
    const token = ERC20;
    const tokenAddress = eth.tokens.erc20_usdt;
    let nonce = await provider.getTransactionCount(customer.address, 'pending');
    const fee = await provider.getFeeData();
    const tokenGas = payments.some((p) => p.ticker === 'erc20_usdt')
      ? ((await new Contract(tokenAddress, ERC20, customer).getFunction('transfer').estimateGas(customer.address, 1n)) * 3n) / 2n + 30_000n
      : 0n;
    const signed: string[] = [];
    for (const p of payments) {
      const tx =
        p.ticker === 'eth'
          ? { to: p.to, value: p.amount, gasLimit: 21_000n }
          : { to: tokenAddress, data: token.encodeFunctionData('transfer', [p.to, p.amount]), gasLimit: tokenGas };
      signed.push(
        await customer.signTransaction({
          ...tx, nonce: nonce++, chainId: net.chainId, type: 2, maxFeePerGas: fee.maxFeePerGas! * 2n, maxPriorityFeePerGas: fee.maxPriorityFeePerGas!,
        }),
      );
    }
    const out = payments.map((payment) => ({ payment }) as { payment: EvmPayment; txid?: string; error?: string });
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(inFlight, signed.length) }, async () => {
        while (next < signed.length) {
          const i = next++;
          try {
            out[i].txid = await provider.send('eth_sendRawTransaction', [signed[i]]);
          } catch (e) {
            out[i].error = String(e).slice(0, 200);
          }
        }
      }),
    );
    // Paid means mined: wait for every receipt (bounded).
    const deadline = Date.now() + 180_000;
    for (const o of out) {
      if (!o.txid) continue;
      for (;;) {
        const r = await provider.getTransactionReceipt(o.txid);
        if (r) {
          if (r.status !== 1) o.error = `${o.txid} reverted`;
          break;
        }
        if (Date.now() > deadline) {
          o.error = `${o.txid} not mined within 180 s`;
          break;
        }
        await new Promise((res) => setTimeout(res, 250));
      }
    }
    return out;
  } finally {
    provider.destroy();
  }
}
