/**
 * A deposit's unique key and its workflow ID (DESIGN 1): `deposit:{network}:{txid}:{index}`, the index
 * being the UTXO's vout or the account chain's log or instruction index (-1 for ether sent by the
 * transaction itself, see ObservedDeposit.index). Written and read only here.
 */
export function depositKey(d: { network: string; txid: string; index: number }): string {
  return `deposit:${d.network}:${d.txid}:${d.index}`;
}

/** The index a deposit key ends with (a txid never holds ':', so the last field is the index). */
export function depositIndex(key: string): number {
  const index = key.slice(key.lastIndexOf(':') + 1);
  if (!key.startsWith('deposit:') || !/^-?\d+$/.test(index)) throw new RangeError(`not a deposit key: ${key}`);
  return Number(index);
}
