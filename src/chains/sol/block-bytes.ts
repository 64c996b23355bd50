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

import type { WatchedBytes } from './watched-bytes';

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
const NAMING = [Buffer.from('"pubkey":"'), Buffer.from('"owner":"')];
const BLOCKHASH = Buffer.from('"blockhash":"');
const BLOCK_KEY = Buffer.from('"blockhash"');

/** Whether a getBlock answer holds a block object (every block has a hash); else it is an error answer or none, small. */
export function holdsBlock(bytes: Buffer): boolean {
  return bytes.includes(BLOCK_KEY);
}

/** Whether every `key` (quoted) in the answer is followed at once by `:"` (the node writes compact JSON), judged by the first. */
function compact(bytes: Buffer, key: string): boolean {
  const at = bytes.indexOf(key, 0, 'latin1');
  return at < 0 || (bytes[at + key.length] === COLON && bytes[at + key.length + 1] === QUOTE);
}

/** The base58 string of 32 to 44 characters at bytes[start], up to its closing quote, or null. */
function base58At(bytes: Buffer, start: number): string | null {
  let end = start;
  while (end < bytes.length && BASE58[bytes[end]] === 1) end++;
  const len = end - start;
  return bytes[end] === QUOTE && len >= 32 && len <= 44 ? bytes.toString('latin1', start, end) : null;
}

/**
 * The cheaper reading of a block: its hash and the watched addresses its transactions name as account keys
 * (a SOL recipient, loaded addresses included) or as a token balance's owner (an SPL recipient), found by
 * searching the answer's text for those two keys and probing `watched` with each address after them. Null when
 * the answer is not the compact JSON the search is written for: the full outline below reads any.
 */
export function watchedNamed(bytes: Buffer, watched: WatchedBytes): { blockhash: string; addresses: string[] } | null {
  if (!compact(bytes, '"pubkey"') || !compact(bytes, '"owner"') || !compact(bytes, '"blockhash"')) return null;
  const at = bytes.indexOf(BLOCKHASH);
  const blockhash = at < 0 ? null : base58At(bytes, at + BLOCKHASH.length);
  if (blockhash === null) return null;
  const found = new Set<string>();
  if (watched.size > 0) {
    const buf = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
    for (const key of NAMING) {
      for (let k = bytes.indexOf(key); k >= 0; k = bytes.indexOf(key, k + key.length)) {
        // The value is that address when its bytes are followed by the closing quote (base58 has no escaped character).
        const a = watched.find(buf, k + key.length);
        if (a !== undefined) found.add(a);
      }
    }
  }
  return { blockhash, addresses: [...found] };
}

export interface BlockOutline {
  /** The result's `blockhash`; null when the answer holds no block object (an error, or `result: null`). */
  blockhash: string | null;
  /** Byte offsets of each transaction object: [start, end). */
  txStart: number[];
  txEnd: number[];
  /** Each watched address named inside the transactions → the indexes of the transactions naming it, ascending. */
  addresses: Map<string, number[]>;
}

function equals(buf: Uint8Array, start: number, end: number, word: string): boolean {
  if (end - start !== word.length) return false;
  for (let k = 0; k < word.length; k++) if (buf[start + k] !== word.charCodeAt(k)) return false;
  return true;
}

/**
 * `watched`: whose addresses to collect, each address-shaped string probed where it lies (the reading of an
 * answer in another form than the compact one); without, only the hash and the transactions' places, for
 * `transactionsNaming`.
 */
export function outlineBlock(bytes: Buffer, watched?: WatchedBytes): BlockOutline {
  const buf = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  const n = buf.length;
  const txStart: number[] = [];
  const txEnd: number[] = [];
  const addresses = new Map<string, number[]>();
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
        const a = watched && plain && len >= 32 && len <= 44 ? watched.find(buf, i + 1) : undefined;
        if (a !== undefined) {
          const t = txStart.length - 1;
          const txs = addresses.get(a);
          if (!txs) addresses.set(a, [t]);
          else if (txs[txs.length - 1] !== t) txs.push(t);
        }
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
  return { blockhash, txStart, txEnd, addresses };
}

/** The indexes of the outline's transactions whose text holds one of `addresses`, ascending. */
export function transactionsNaming(bytes: Buffer, outline: BlockOutline, addresses: Iterable<string>): number[] {
  const found = new Set<number>();
  for (const a of addresses) {
    for (let at = bytes.indexOf(a, 0, 'latin1'); at >= 0; at = bytes.indexOf(a, at + a.length, 'latin1')) {
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
  const outline = outlineBlock(bytes, named === null ? watched : undefined);
  if (outline.blockhash === null) return { blockhash: null, txs: [] };
  let hit: number[];
  if (named) {
    // A watched address's text inside a transaction is that address (a longer base58 string holding it would be
    // no address, and parsing its transaction only costs the parse).
    hit = transactionsNaming(bytes, outline, named.addresses);
  } else {
    hit = [...new Set([...outline.addresses.values()].flat())].sort((x, y) => x - y);
  }
  return { blockhash: outline.blockhash, txs: hit.map((t) => bytes.toString('utf8', outline.txStart[t], outline.txEnd[t])) };
}
