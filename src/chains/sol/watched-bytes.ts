// The watched addresses' table that src/chains/sol/block-bytes.ts probes a block's bytes with.

const QUOTE = 0x22;

/**
 * The watched addresses as a table a block's bytes are probed with: an address string of the block is looked
 * up where it lies, so no string is made for the thousands a mainnet block names that nobody watches (votes
 * and every other transaction cost one hash and one probe per address they name). Only ever added to. The
 * addresses' bytes lie end to end in one array (a gateway may watch millions: no object per address).
 */
export class WatchedBytes {
  private slots = new Int32Array(1 << 10).fill(-1);
  private bytes = new Uint8Array(1 << 14);
  private used = 0;
  /** Per entry: where its bytes start in `bytes`, their length, its hash. */
  private readonly starts: number[] = [];
  private readonly lengths: number[] = [];
  private readonly hashes: number[] = [];

  get size(): number {
    return this.starts.length;
  }

  /** Where has() spells an address, its closing quote after it (addresses are short: no Buffer per call). */
  private readonly probe = new Uint8Array(64);

  has(address: string): boolean {
    if (address.length < 8) return false;
    if (address.length >= this.probe.length) return this.find(Buffer.from(`${address}"`, 'latin1'), 0) !== undefined;
    for (let k = 0; k < address.length; k++) this.probe[k] = address.charCodeAt(k);
    this.probe[address.length] = QUOTE;
    return this.find(this.probe, 0) !== undefined;
  }

  /** `address`: base58, so its latin1 bytes are what a block's text holds. */
  add(address: string): void {
    if (address.length < 8 || this.has(address)) return;
    while (this.used + address.length > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    const start = this.used;
    this.bytes.set(Buffer.from(address, 'latin1'), start);
    this.used += address.length;
    this.starts.push(start);
    this.lengths.push(address.length);
    this.hashes.push(headHash(this.bytes, start));
    if (2 * this.starts.length > this.slots.length) {
      this.slots = new Int32Array(this.slots.length * 2).fill(-1);
      for (let e = 0; e < this.starts.length; e++) this.place(e);
    } else {
      this.place(this.starts.length - 1);
    }
  }

  private place(e: number): void {
    const mask = this.slots.length - 1;
    let slot = this.hashes[e] & mask;
    while (this.slots[slot] !== -1) slot = (slot + 1) & mask;
    this.slots[slot] = e;
  }

  /**
   * The watched address that the string starting at buf[start] spells (its closing quote included), or
   * undefined. Told by its first bytes, so the string's end is looked for only when they are a watched one's.
   */
  find(buf: Uint8Array, start: number): string | undefined {
    if (start + 8 > buf.length) return undefined;
    const hash = headHash(buf, start);
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const e = this.slots[slot];
      if (e === -1) return undefined;
      if (this.hashes[e] !== hash) continue;
      const at = this.starts[e];
      const len = this.lengths[e];
      if (buf[start + len] !== QUOTE) continue;
      let k = 0;
      while (k < len && this.bytes[at + k] === buf[start + k]) k++;
      if (k === len) return Buffer.from(this.bytes.buffer, at, len).toString('latin1');
    }
  }
}

/** A hash of the 8 bytes at buf[start] (every address is longer: 32 to 44 base58 characters), a small integer. */
function headHash(buf: Uint8Array, start: number): number {
  const lo = buf[start] | (buf[start + 1] << 8) | (buf[start + 2] << 16) | (buf[start + 3] << 24);
  const hi = buf[start + 4] | (buf[start + 5] << 8) | (buf[start + 6] << 16) | (buf[start + 7] << 24);
  const x = Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1);
  return (x ^ (x >>> 15)) & 0x3fffffff;
}
