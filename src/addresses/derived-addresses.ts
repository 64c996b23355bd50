import { createHash } from 'node:crypto';
import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { ChainMode } from '../chains/config';
import { evmAddressOfPublicKey, PublicChildDeriver } from './public-child';
import { utxoAddressOfPubkey } from '../chains/utxo/address';
import { utxoNetwork } from '../chains/utxo/networks';
import type { PublicKeys } from './watch-only';
import type { Db } from '../db/client';
import { lastStoredIndex, peekNextIndex, storeDerivedRun } from '../db/queries/derivation';
import { NETWORKS } from '../domain/assets';

/** addresses of indexes start, start+1, … start+count-1. */
export type RangeDeriver = (start: bigint, count: number) => Promise<string[]>;

/**
 * address_in of index i from the account xpub, the same as watchOnlyAddressIn (test/security checks every
 * network and mode against it, and test/chains/public-child.test.ts random keys against bip32 and ethers):
 * the external-chain node (…/0) parsed and derived once instead of per address, each child by
 * PublicChildDeriver (HMAC in OpenSSL, the point arithmetic native where it can be: src/chains/secp256k1.ts),
 * and an EVM key made uncompressed there and hashed once on bytes.
 */
export function xpubDeriver(keys: PublicKeys, networkId: string, mode: ChainMode): (index: bigint) => string {
  const xpub = keys.xpubs[networkId];
  if (!xpub) throw new Error(`no public key published for ${networkId}`);
  const external = new PublicChildDeriver(xpub, 0);
  const evm = NETWORKS[networkId].family === 'evm';
  const network = evm ? undefined : utxoNetwork(networkId, mode);
  return (index) => {
    if (index < 0n || index >= 2n ** 31n) throw new RangeError(`derivation index out of range: ${index}`);
    if (evm) return evmAddressOfPublicKey(external.child(Number(index), false));
    return utxoAddressOfPubkey(network!, external.child(Number(index)));
  };
}

/** The addresses of indexes start … start+count-1, by `derive`. */
export function deriveRun(derive: (index: bigint) => string, start: bigint, count: number): string[] {
  return Array.from({ length: count }, (_, k) => derive(start + BigInt(k)));
}

/** Sources already named: every create asks for its network's (a hash each time was a create's 3 %). */
const sources = new Map<string, string>();

/** The derived_addresses source of a network's xpub in one chain mode. */
export function derivedSource(xpub: string, networkId: string, mode: ChainMode): string {
  const key = `${networkId}:${mode}:${xpub}`;
  let source = sources.get(key);
  if (source === undefined) {
    // A new seed is a new xpub: the few networks and modes of this process, and rarely more.
    if (sources.size >= 64) sources.clear();
    sources.set(key, (source = `${networkId}:${mode}:${createHash('sha256').update(xpub).digest('hex').slice(0, 32)}`));
  }
  return source;
}

/** Addresses derived per chunk on the API's thread; the event loop serves requests between chunks. */
const CHUNK = 64;
/** Addresses per run of the derivation thread (and per insert): the fill must outpace a burst of creates. */
const RUN = 256;
/** How far ahead of the last index handed out the addresses are kept. */
const AHEAD = 1024;
/** How many a create that found none waits for (more than the creates one process has in flight). */
const NOW = 256;

/**
 * The derived_addresses rows of one source, kept ahead of the family's next derivation index (its
 * sequence, src/db/queries/derivation.ts; "the counter" below). Invariant: every index from the counter up
 * to the largest stored one is present (fills run upwards from there). Any
 * number of API processes may fill at once (ON CONFLICT DO NOTHING); a row is only ever the derivation of
 * its index from its source's xpub, so a miss can delay a create, never give it a wrong address.
 */
export class DerivedAddressSupply {
  /** Every index in [counter, ready) is stored; undefined until read. */
  private ready: bigint | undefined;
  private filling: Promise<void> | undefined;
  private refilling: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    readonly source: string,
    private readonly family: string,
    /** The derivation on the caller's thread: what a create waiting for its address uses. */
    private readonly derive: (index: bigint) => string,
    /** Where the stock kept ahead is derived (src/addresses/derive-thread.ts); unset: `derive`. */
    private readonly ahead?: RangeDeriver,
  ) {}

  /**
   * Whether this process has read or filled the stock yet. Until it has, a create refills first: an index
   * a create takes with no address stored for it is skipped (the sequence does not roll back).
   */
  get stocked(): boolean {
    return this.ready !== undefined;
  }

  /** After a create took `index`: keeps AHEAD addresses in stock, filling in the background. */
  noteTaken(index: bigint): void {
    if (this.ready === undefined || index + 1n > this.ready) this.ready = index + 1n;
    if (!this.filling && this.ready - index < AHEAD / 2) {
      this.filling = this.fill(this.ready, index + BigInt(AHEAD), this.ahead)
        .catch(() => undefined)
        .finally(() => (this.filling = undefined));
    }
  }

  /**
   * A create found no address for its index: stores enough from the counter on for the creates in flight,
   * then the rest of the stock in the background. Concurrent callers share one refill.
   */
  refill(): Promise<void> {
    this.refilling ??= this.refillNow().finally(() => (this.refilling = undefined));
    return this.refilling;
  }

  private async refillNow(): Promise<void> {
    await this.filling;
    const counter = await peekNextIndex(this.db, this.family);
    const stored = await lastStoredIndex(this.db, this.source);
    const from = stored + 1n > counter ? stored + 1n : counter;
    this.ready = from;
    await this.fill(from, counter + BigInt(NOW));
    this.noteTaken(counter);
  }

  /**
   * Stores the addresses of [from, to) run by run. On this thread a run is CHUNK addresses, with requests
   * served between runs; with `range` (the derivation thread) a run is RUN addresses, and the thread derives
   * the next run while this one is stored.
   */
  private async fill(from: bigint, to: bigint, range?: RangeDeriver): Promise<void> {
    const size = BigInt(range ? RUN : CHUNK);
    const countFrom = (start: bigint) => Number(to - start < size ? to - start : size);
    const derived = (start: bigint): Promise<string[]> => {
      const p = range!(start, countFrom(start));
      p.catch(() => undefined); // awaited below, unless an insert fails first
      return p;
    };
    let next = range && from < to ? derived(from) : undefined;
    for (let start = from; start < to; start += size) {
      const addresses = next ? await next : deriveRun(this.derive, start, countFrom(start));
      // A run from the thread is checked against this thread's own derivation of its first index (and its
      // length): an answer to another request, or a short one, is refused before anything is stored.
      if (next && (addresses.length !== countFrom(start) || addresses[0] !== this.derive(start))) {
        throw new Error(`derivation run from ${start} does not match this thread's derivation`);
      }
      next = range && start + size < to ? derived(start + size) : undefined;
      await storeDerivedRun(this.db, this.source, start, addresses);
      const end = start + BigInt(addresses.length);
      if (this.ready === undefined || end > this.ready) this.ready = end;
      if (!range) await yieldToRequests();
    }
  }
}
