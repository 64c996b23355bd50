/** The value at quantile `p` (0 < p ≤ 1) of ascending `sorted` by the nearest-rank rule; undefined when it is empty. */
export function quantile(sorted: readonly number[], p: number): number | undefined {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] : undefined;
}
