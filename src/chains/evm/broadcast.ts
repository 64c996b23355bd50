import { isError, Transaction, type JsonRpcProvider } from 'ethers';
import { BroadcastRejectedError, NodeUnavailableError, type ForwardContext, type ForwardPlan, type ForwardStatus } from '../adapter';
import { rpcErrorMessage } from '../rpc-errors';
import { nodeCall } from './node-call';

// The EVM adapter's side of a forward after it is signed: sending its bytes, waiting for a top-up to be
// mined, and reading what became of it.

/**
 * Sends signed bytes with eth_sendRawTransaction itself: ethers' broadcastTransaction also asks for the
 * block number and recovers the sender's key from the signature (pure-JS secp256k1, a few ms each) to build
 * a response object nothing here reads, on the worker's main thread (docs/decisions/0008-evm-rpc-batching.md).
 * Bytes the node already has are sent; a transport failure is the node unavailable (retried); any other
 * refusal is final for these bytes.
 */
export async function sendRaw(provider: JsonRpcProvider, raw: string, txid: string, credentials: readonly string[]): Promise<void> {
  try {
    const hash: unknown = await provider.send('eth_sendRawTransaction', [raw]);
    if (typeof hash !== 'string' || hash.toLowerCase() !== txid.toLowerCase()) throw new Error(`the node answered hash ${String(hash)}`);
  } catch (e) {
    const msg = String((e as Error).message ?? e).toLowerCase();
    if (msg.includes('already known') || msg.includes('already imported') || msg.includes('known transaction')) return;
    // Same bytes already mined: the node reports the nonce as used. The receipt decides; without one,
    // this is a reading, not a verdict (forwardStatus weighs the evidence).
    if (isError(e, 'NONCE_EXPIRED')) {
      if (await provider.getTransactionReceipt(txid)) return;
      throw new BroadcastRejectedError(`${txid} rejected: nonce already used`, { cause: e });
    }
    if (isError(e, 'NETWORK_ERROR') || isError(e, 'TIMEOUT') || isError(e, 'SERVER_ERROR')) throw new NodeUnavailableError(rpcErrorMessage(e, credentials), { cause: e });
    throw new BroadcastRejectedError(`${txid} rejected: ${rpcErrorMessage(e, credentials)}`, { cause: e });
  }
}

/** Waits for `txid`'s receipt (a gas top-up before its token transfer): reverted is a refusal, none in time the node unavailable. */
export async function waitMined(provider: JsonRpcProvider, txid: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await nodeCall(() => provider.getTransactionReceipt(txid));
    if (r) {
      if (r.status !== 1) throw new BroadcastRejectedError(`${txid} reverted`);
      return;
    }
    await new Promise((res) => setTimeout(res, 250));
  }
  throw new NodeUnavailableError(`${txid} not mined within ${timeoutMs} ms`);
}

/**
 * Mined: confirmed or reverted. Not mined: pending, unless the forward's nonce was used by a block that
 * is final (finalityDepth deep) and one of our own rival transactions at that nonce (ctx.rivals) is
 * mined there: only then can these bytes never land, and the plan is replaceable. A nonce used by a
 * transaction the gateway never signed is left for the operator (pending with a note): a null
 * receipt is also what a lagging or lying node answers for our own mined forward.
 */
export async function forwardStatusOf(provider: JsonRpcProvider, plan: ForwardPlan, ctx: ForwardContext, finalityDepth: number): Promise<ForwardStatus> {
  const r = await nodeCall(() => provider.getTransactionReceipt(plan.txidOut));
  if (r) {
    if (r.status !== 1) return { status: 'failed', reason: 'reverted' };
    return { status: 'confirmed', blockNumber: BigInt(r.blockNumber), blockHash: r.blockHash };
  }
  if (await nodeCall(() => provider.getTransaction(plan.txidOut))) return { status: 'pending', known: true };
  const fwd = Transaction.from(plan.txs[plan.txs.length - 1].raw);
  const head = await nodeCall(() => provider.getBlockNumber());
  const final = head - finalityDepth;
  if (final < 0) return { status: 'pending', known: false };
  const usedByFinal = await nodeCall(() => provider.getTransactionCount(fwd.from!, final));
  if (usedByFinal <= fwd.nonce) return { status: 'pending', known: false };
  const rivals = typeof ctx.rivals === 'function' ? await ctx.rivals() : (ctx.rivals ?? []);
  for (const rival of rivals) {
    const rr = await nodeCall(() => provider.getTransactionReceipt(rival));
    if (rr && rr.blockNumber <= final) {
      return { status: 'replaceable', reason: `nonce ${fwd.nonce} taken by ${rival}, final at block ${rr.blockNumber}`, observedAt: BigInt(head) };
    }
  }
  return { status: 'pending', known: false, note: `nonce ${fwd.nonce} of ${fwd.from} is used on chain but no receipt of ${plan.txidOut} or of a rival of ours: waiting` };
}
