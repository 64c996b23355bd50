import { getAddress, type JsonRpcProvider } from 'ethers';
import { NodeUnavailableError, type Confirmations, type ObservedDeposit } from '../adapter';
import { parseTransferLog } from './erc20';
import { isInternalIndex, INTERNAL_INDEX_BASE } from './internal-transfers';
import { NATIVE_INDEX, nodeCall } from './scan';
import type { CallTracer } from './trace';

/**
 * A deposit's confirmations: the head's height against the deposit's block, which must still be the one it
 * was seen in; when that block was reorganised away, the deposit counts only if its transaction was mined
 * again (reincluded). `tokensByContract`: checksummed contract → ticker of the configured tokens.
 */
export async function depositConfirmations(
  provider: JsonRpcProvider,
  tokensByContract: Map<string, string>,
  tracer: CallTracer,
  d: ObservedDeposit,
): Promise<Confirmations> {
  const [headNumber, block] = await Promise.all([
    nodeCall(() => provider.getBlockNumber()),
    nodeCall(() => provider.getBlock(Number(d.blockNumber))),
  ]);
  // A node that has not reached the deposit's height is behind (lagging, load-balanced), not reorganised.
  if (!block || headNumber < Number(d.blockNumber)) throw new NodeUnavailableError(`node at ${headNumber} has no block ${d.blockNumber} yet`);
  if (block.hash === d.blockHash) return { status: 'confirmed', confirmations: Math.max(0, headNumber - Number(d.blockNumber) + 1) };
  return reincluded(provider, tokensByContract, tracer, d, headNumber);
}

/**
 * The orphaned deposit's transaction mined again in a canonical block: it still counts if it pays the
 * same recipient the same amount at the same index (the transaction's ETH value, the same internal call
 * of its trace, or the same Transfer log).
 */
async function reincluded(
  provider: JsonRpcProvider,
  tokensByContract: Map<string, string>,
  tracer: CallTracer,
  d: ObservedDeposit,
  headNumber: number,
): Promise<Confirmations> {
  const reorged = { status: 'reorged', confirmations: 0, observedAt: BigInt(headNumber) } as const;
  const r = await nodeCall(() => provider.getTransactionReceipt(d.txid));
  if (!r || r.status !== 1) return reorged;
  const block = await nodeCall(() => provider.getBlock(r.blockNumber));
  if (!block || block.hash !== r.blockHash) return reorged;
  if (d.index === NATIVE_INDEX) {
    const tx = await nodeCall(() => provider.getTransaction(d.txid));
    if (!tx?.to || getAddress(tx.to) !== d.recipient || tx.value !== d.amount) return reorged;
  } else if (isInternalIndex(d.index)) {
    // Ether a contract sent: the transaction's `to` is that contract, never the deposit address.
    const t = (await tracer.transaction(d.txid)).find((x) => x.ordinal === d.index - INTERNAL_INDEX_BASE);
    if (!t || getAddress(t.to) !== d.recipient || t.value !== d.amount) return reorged;
  } else {
    const log = r.logs.find((l) => l.index === d.index);
    const t = log && parseTransferLog(log);
    const ticker = log && tokensByContract.get(getAddress(log.address));
    if (!t || ticker !== d.ticker || t.to !== d.recipient || t.value !== d.amount) return reorged;
  }
  return { status: 'confirmed', confirmations: Math.max(0, headNumber - r.blockNumber + 1), block: { number: BigInt(r.blockNumber), hash: r.blockHash } };
}
