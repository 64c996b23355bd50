import { keccak256, Transaction, type JsonRpcProvider, type Wallet } from 'ethers';
import type { ForwardPlan } from '../adapter';

export interface TopupIo {
  provider: JsonRpcProvider;
  tank: Wallet;
  send(raw: string, txid: string): Promise<void>;
  /** The gas tank's lock across processes: its nonce is read and used inside, nowhere else. */
  lockTank<T>(fn: () => Promise<T>): Promise<T>;
  /** Stores a plan whose top-up was signed again, before that top-up is sent. */
  onPlanChange?: (plan: ForwardPlan) => Promise<void>;
}

/**
 * Makes sure a plan's gas top-up is mined or on its way, and returns the txid to wait for (undefined:
 * nothing to wait for). Only the forward's bytes are sacred (they move the merchant's money); the top-up
 * is fungible ether from the gas tank. So when the tank's nonce moved on since the plan was signed, the
 * same top-up is signed again at the tank's current nonce, recorded, and sent, all under the tank's
 * lock. The top-up's value was fixed when the plan was signed (forward.ts: spare ether at address_in
 * counted only when nothing of the source was in flight).
 */
export async function ensureTopup(io: TopupIo, plan: ForwardPlan): Promise<string | undefined> {
  const { provider, tank } = io;
  const at = plan.txs.findIndex((t) => t.role === 'gas-topup');
  if (at < 0) return undefined;
  const topup = plan.txs[at];
  const forward = plan.txs[plan.txs.length - 1];
  // The forward is only ever sent once its top-up is mined: if the node has it, the gas arrived.
  if (await provider.getTransactionReceipt(forward.txid)) return undefined;
  if (await provider.getTransaction(forward.txid)) return undefined;
  const ids = [topup.txid, ...(plan.replacedTopups ?? [])];
  for (const id of ids) if ((await provider.getTransactionReceipt(id))?.status === 1) return undefined;
  for (const id of ids) if (await provider.getTransaction(id)) return id;
  return io.lockTank(async () => {
    const stored = Transaction.from(topup.raw);
    const nonce = await provider.getTransactionCount(tank.address, 'pending');
    if (nonce === stored.nonce) {
      await io.send(topup.raw, topup.txid);
      return topup.txid;
    }
    // The parsed top-up itself, made unsigned: a clone of a signed transaction recovers its sender's public
    // key (pure-JS secp256k1, milliseconds of the worker's thread each time).
    stored.signature = null;
    stored.nonce = nonce;
    const raw = await tank.signTransaction(stored);
    const txid = keccak256(raw);
    const next: ForwardPlan = {
      ...plan,
      txs: plan.txs.map((t, i) => (i === at ? { role: 'gas-topup', raw, txid } : t)),
      replacedTopups: ids,
    };
    await io.onPlanChange?.(next);
    await io.send(raw, txid);
    return txid;
  });
}
