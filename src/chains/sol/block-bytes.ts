/**
 * One pass over a getBlock answer's bytes (`transactionDetails: 'accounts'`, JSON) that finds, without
 * parsing it, what decides whether the block needs parsing at all: the block's hash, where each transaction
 * lies, and every address-shaped string (32–44 base58 characters) with the transactions it appears in.
 *
 * A deposit to an address always names it in its transaction: a SOL recipient is one of the account keys, an
 * SPL recipient is the token balance's `owner`. So a transaction none of whose address strings is watched
 * pays no watched address, and only the transactions that name one are parsed (JSON.parse of the whole
 * answer of a mainnet block costs more than the slot's share of a core). The pass follows JSON's grammar only
 * as far as strings (escapes included, so a quote inside one is never taken for its end) and nesting go:
 * base58 has no character JSON escapes, so an address is always its plain bytes between quotes.
 */

const BASE58 = new Uint8Array(256);
for (const c of '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz') BASE58[c.charCodeAt(0)] = 1;

const QUOTE = 0x22;
// Bytes outside strings that matter here; any other (digits, literals, white space) is passed over.
const STRUCTURAL = new Uint8Array(256);
for (const c of '"{}[]:,') STRUCTURAL[c.charCodeAt(0)] = 1;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/** The keys whose value names an address a deposit can be to: an account key, a token balance's owner. */
const NAMING = /"(?:pubkey|owner)":"/;
const BLOCKHASH = /"blockhash":"([1-9A-HJ-NP-Za-km-z]{32,44})"/;

/** Whether every `"key"` in the text is followed at once by `:"` (the node writes compact JSON), judged by the first. */
function compact(text: string, key: string): boolean {
  const at = text.indexOf(key);
  return at < 0 || text.startsWith(':"', at + key.length);
}

/** Hashed by length and first and last bytes: enough to tell addresses apart, and cheap. */
function hashOf(buf: Uint8Array, start: number, end: number): number {
  return (buf[start] | (buf[start + 1] << 8) | (buf[end - 2] << 16) | (buf[end - 1] << 24)) ^ Math.imul(end - start, 0x9e3779b1);
}

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

  has(address: string): boolean {
    const b = Buffer.from(`${address}"`, 'latin1');
    return this.find(b, 0) !== undefined;
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

/**
 * The cheaper reading of a block: its hash and the watched addresses its transactions name as account keys
 * (a SOL recipient, loaded addresses included) or as a token balance's owner (an SPL recipient), found by
 * searching the answer's text for those two keys and probing `watched` with each address after them. Null when
 * the answer is not the compact JSON the search is written for: the full outline below reads any.
 */
export function watchedNamed(bytes: Buffer, watched: WatchedBytes): { blockhash: string; addresses: string[] } | null {
  const text = bytes.toString('latin1');
  if (!compact(text, '"pubkey"') || !compact(text, '"owner"') || !compact(text, '"blockhash"')) return null;
  const hash = BLOCKHASH.exec(text);
  if (!hash) return null;
  const found = new Set<string>();
  if (watched.size > 0) {
    const buf = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
    // One search for both keys; test() moves lastIndex past the match and makes no string (exec would, per naming).
    const naming = new RegExp(NAMING, 'g');
    while (naming.test(text)) {
      // The value is that address when its bytes are followed by the closing quote (base58 has no escaped character).
      const a = watched.find(buf, naming.lastIndex);
      if (a !== undefined) found.add(a);
    }
  }
  return { blockhash: hash[1], addresses: [...found] };
}

export interface BlockOutline {
  /** The result's `blockhash`; null when the answer holds no block object (an error, or `result: null`). */
  blockhash: string | null;
  /** Byte offsets of each transaction object: [start, end). */
  txStart: number[];
  txEnd: number[];
  /** Each distinct address-shaped string inside the transactions → the indexes of the transactions naming it, ascending. */
  addresses: Map<string, number[]>;
}

function equals(buf: Uint8Array, start: number, end: number, word: string): boolean {
  if (end - start !== word.length) return false;
  for (let k = 0; k < word.length; k++) if (buf[start + k] !== word.charCodeAt(k)) return false;
  return true;
}

/**
 * The distinct address strings, told apart by a hash of their bytes: a mainnet block names a few thousand
 * addresses tens of thousands of times, and a string made for each naming would cost more than the pass.
 */
class AddressTable {
  private slots = new Int32Array(1 << 14).fill(-1);
  private readonly hashes: number[] = [];
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  readonly txs: number[][] = [];

  constructor(private readonly buf: Uint8Array) {}

  add(start: number, end: number, hash: number, tx: number): void {
    const buf = this.buf;
    const len = end - start;
    let mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const e = this.slots[slot];
      if (e === -1) break;
      if (this.hashes[e] === hash && this.ends[e] - this.starts[e] === len) {
        const s = this.starts[e];
        let k = 0;
        while (k < len && buf[s + k] === buf[start + k]) k++;
        if (k === len) {
          const seen = this.txs[e];
          if (seen[seen.length - 1] !== tx) seen.push(tx);
          return;
        }
      }
      slot = (slot + 1) & mask;
    }
    const id = this.hashes.length;
    this.hashes.push(hash);
    this.starts.push(start);
    this.ends.push(end);
    this.txs.push([tx]);
    if (2 * this.hashes.length > this.slots.length) {
      this.slots = new Int32Array(this.slots.length * 2).fill(-1);
      mask = this.slots.length - 1;
      for (let e = 0; e < this.hashes.length; e++) {
        let sl = this.hashes[e] & mask;
        while (this.slots[sl] !== -1) sl = (sl + 1) & mask;
        this.slots[sl] = e;
      }
    } else {
      this.slots[slot] = id;
    }
  }

  toMap(bytes: Buffer): Map<string, number[]> {
    const m = new Map<string, number[]>();
    for (let e = 0; e < this.hashes.length; e++) m.set(bytes.toString('latin1', this.starts[e], this.ends[e]), this.txs[e]);
    return m;
  }
}

/**
 * `addresses`: whether to collect the address strings (the reading of an answer in another form than the
 * compact one); without, only the hash and the transactions' places, for `transactionsNaming`.
 */
export function outlineBlock(bytes: Buffer, addresses = true): BlockOutline {
  const buf = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  const n = buf.length;
  const txStart: number[] = [];
  const txEnd: number[] = [];
  const table = new AddressTable(buf);
  let blockhash: string | null = null;
  let depth = 0;
  // The open containers down to the transactions: the answer object (1), its result (2), the transactions array (3).
  let inResult = false;
  let inTxs = false;
  // The last key read at depths 1 and 2 (object members there), and whether a value follows it.
  let keyStart = -1;
  let keyEnd = -1;
  let afterColon = false;
  let i = 0;
  while (i < n) {
    let c = buf[i];
    if (STRUCTURAL[c] === 0) {
      while (++i < n && STRUCTURAL[(c = buf[i])] === 0);
      if (i === n) break;
    }
    if (c === QUOTE) {
      let j = i + 1;
      let d = 0;
      while (j < n && BASE58[(d = buf[j])] === 1) j++;
      const plain = d === QUOTE;
      if (!plain) {
        while (j < n) {
          d = buf[j];
          if (d === QUOTE) break;
          j += d === BACKSLASH ? 2 : 1;
        }
      }
      if (inTxs && depth > 3) {
        const len = j - i - 1;
        if (addresses && plain && len >= 32 && len <= 44) table.add(i + 1, j, hashOf(buf, i + 1, j), txStart.length - 1);
      } else if (depth <= 2) {
        if (!afterColon) {
          keyStart = i + 1;
          keyEnd = j;
        } else if (depth === 2 && inResult && equals(buf, keyStart, keyEnd, 'blockhash')) {
          blockhash = bytes.toString('latin1', i + 1, j);
        }
      }
      i = j + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 1 && c === OPEN_OBJECT && equals(buf, keyStart, keyEnd, 'result')) inResult = true;
      else if (depth === 2 && inResult && c === OPEN_ARRAY && equals(buf, keyStart, keyEnd, 'transactions')) inTxs = true;
      else if (depth === 3 && inTxs && c === OPEN_OBJECT) txStart.push(i);
      depth++;
      afterColon = false;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      if (depth === 3 && inTxs && c === CLOSE_OBJECT) txEnd.push(i + 1);
      else if (depth === 2 && inTxs) inTxs = false;
      else if (depth === 1 && inResult) inResult = false;
    } else if (c === COLON) {
      afterColon = true;
    } else if (c === COMMA) {
      afterColon = false;
    }
    i++;
  }
  return { blockhash, txStart, txEnd, addresses: table.toMap(bytes) };
}

/** The indexes of the outline's transactions whose text holds one of `addresses`, ascending. */
export function transactionsNaming(bytes: Buffer, outline: BlockOutline, addresses: Iterable<string>): number[] {
  const text = bytes.toString('latin1');
  const found = new Set<number>();
  for (const a of addresses) {
    for (let at = text.indexOf(a); at >= 0; at = text.indexOf(a, at + a.length)) {
      // The last transaction that starts before the string, if the string lies inside it.
      let lo = 0;
      let hi = outline.txStart.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (outline.txStart[mid] < at) lo = mid;
        else hi = mid - 1;
      }
      if (hi >= 0 && outline.txStart[lo] < at && at < outline.txEnd[lo]) found.add(lo);
    }
  }
  return [...found].sort((x, y) => x - y);
}

/** What the watcher reads of a block answer: its hash (null when it holds no block object) and the transactions that name a watched address. */
export interface WatchedTexts {
  blockhash: string | null;
  /** The JSON text of each transaction that names a watched address, in the block's order. */
  txs: string[];
}

/**
 * Only the transactions that name a watched address, as text to parse; a block that names none costs one
 * pass over its bytes. A deposit to a watched address always names it (see the top of this file).
 */
export function watchedTransactionTexts(bytes: Buffer, watched: WatchedBytes): WatchedTexts {
  const named = watchedNamed(bytes, watched);
  if (named && named.addresses.length === 0) return { blockhash: named.blockhash, txs: [] };
  const outline = outlineBlock(bytes, named === null);
  if (outline.blockhash === null) return { blockhash: null, txs: [] };
  let hit: number[];
  if (named) {
    // A watched address's text inside a transaction is that address (a longer base58 string holding it would be
    // no address, and parsing its transaction only costs the parse).
    hit = transactionsNaming(bytes, outline, named.addresses);
  } else {
    const set = new Set<number>();
    for (const [a, txs] of outline.addresses) if (watched.has(a)) for (const t of txs) set.add(t);
    hit = [...set].sort((x, y) => x - y);
  }
  return { blockhash: outline.blockhash, txs: hit.map((t) => bytes.toString('utf8', outline.txStart[t], outline.txEnd[t])) };
}
