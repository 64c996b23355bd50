/**
 * Serializes work per source address inside this process. Nonces themselves always come from the
 * node's pending count at prepare time: two plans that raced each other carry the same nonce, so at
 * most one of them can ever be mined — a duplicate forward is impossible, the loser is rejected and
 * re-prepared by its caller.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
