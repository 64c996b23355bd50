/**
 * Signs a forward at the fee its own signed size asks for. A signature's DER length (70 to 72 bytes)
 * depends on the signed bytes, the fee among them: a fee can sign a byte longer than the size it was
 * computed for, and the next one a byte shorter, for ever (seen on a regtest bch deposit: every retry of
 * its forward failed the same way). So the search signs, measures, and signs again at the fee of that
 * size, and a fee already tried that covers the signed size ends it: it overpays by at most a byte or two
 * at the rate, and never pays less than the rate for the bytes it sends (a node refuses a forward below
 * its minimum relay rate, and would refuse the same stored bytes at every retry).
 */
export function signAtCoveringFee<T>(o: {
  /** The first fee to sign at (an estimate of the signed size). */
  first: bigint;
  build(fee: bigint): T;
  /** The fee the signed transaction's size asks for. */
  feeOf(built: T): bigint;
}): { built: T; fee: bigint } {
  let fee = o.first;
  let built = o.build(fee);
  const tried = new Set<bigint>();
  for (let i = 0; i < 8; i++) {
    const need = o.feeOf(built);
    if (need === fee || (need < fee && tried.has(need))) break;
    tried.add(fee);
    fee = need;
    built = o.build(fee);
  }
  if (o.feeOf(built) > fee) throw new Error('fee did not converge on the signed size');
  return { built, fee };
}
