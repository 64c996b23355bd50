import { Transaction, type JsonRpcProvider, type Wallet } from 'ethers';
import type { SignedTx } from '../adapter';

/**
 * Sends a plan's gas top-up so that the stored forward can follow, and returns the txid to wait for
 * (undefined: nothing to wait for). Only the forward's bytes are sacred (they move the merchant's
 * money); the top-up is fungible ether from the gas tank. So when a racing plan already used the
 * tank's nonce, the same top-up is signed again at the tank's next nonce instead of failing the
 * payment — and it is skipped when address_in already holds the forward's worst-case gas.
 */
export async function sendTopup(
  provider: JsonRpcProvider,
  tank: Wallet,
  topup: SignedTx,
  forward: SignedTx,
  send: (raw: string, txid: string) => Promise<void>,
): Promise<string | undefined> {
  if (await provider.getTransactionReceipt(topup.txid)) return topup.txid;
  const fwd = Transaction.from(forward.raw);
  if (await provider.getTransactionReceipt(forward.txid)) return undefined;
  const need = fwd.gasLimit * (fwd.maxFeePerGas ?? 0n);
  if ((await provider.getBalance(fwd.from!, 'latest')) >= need) return undefined;
  // Already in the mempool: wait for it.
  if (await provider.getTransaction(topup.txid)) return topup.txid;
  const stored = Transaction.from(topup.raw);
  const nonce = await provider.getTransactionCount(tank.address, 'pending');
  if (nonce <= stored.nonce) {
    await send(topup.raw, topup.txid);
    return topup.txid;
  }
  const again = stored.clone();
  again.signature = null;
  again.nonce = nonce;
  const raw = await tank.signTransaction(again);
  const txid = Transaction.from(raw).hash!;
  await send(raw, txid);
  return txid;
}
