import type { Db } from '../db/client';
import { addressesCreatedSince } from '../db/queries/watch';

/**
 * How long a create may take from its start (its row's created_at, the transaction's now()) to its commit and
 * still be read by the next refresh. A create is one statement that waits on nothing longer than another
 * create of the same callback; PGlite runs one transaction at a time, so there a row committed after a refresh
 * always started after it.
 */
export const SETTLE_MS = 30_000;

/**
 * The address_in of every configuration of an address family, in memory: loaded whole once, then refreshed
 * before each pass that judges blocks by reading only the rows created since the previous refresh's now(),
 * less SETTLE_MS (one indexed range, usually empty). A block is never judged against a stale list:
 *
 * - the adapter asks for the list (`current`) after it has listed the blocks it reads, so each of those
 *   blocks existed when the refresh's statement began;
 * - a payment in a block was sent before the block was made, to an address its configuration's create had
 *   already returned, hence committed: visible to that statement, unless it committed after the previous
 *   refresh began yet started more than SETTLE_MS before it (a create that lasted longer than SETTLE_MS);
 * - so each refresh reads created_at >= (previous refresh's now() - SETTLE_MS), which holds every row that
 *   earlier refreshes did not see.
 *
 * A configuration is never deleted, so the list only grows (an address that is no longer watched would only
 * cost its transactions a parse). A process that starts loads it whole: a restart loses nothing.
 */
export class WatchedAddresses {
  /** Every address once, in the order first read: the adapter follows it by its length. */
  readonly list: string[] = [];
  private readonly known = new Set<string>();
  private since: Date | null = null;

  constructor(
    private readonly db: Db,
    private readonly family: string,
  ) {}

  /** The list, refreshed now. */
  async current(): Promise<readonly string[]> {
    const { at, addresses } = await addressesCreatedSince(this.db, this.family, this.since);
    for (const a of addresses) {
      if (this.known.has(a)) continue;
      this.known.add(a);
      this.list.push(a);
    }
    const next = new Date(at.getTime() - SETTLE_MS);
    // Concurrent refreshes: the later horizon once its own rows are in.
    if (this.since === null || next > this.since) this.since = next;
    return this.list;
  }
}

const perDb = new WeakMap<Db, Map<string, WatchedAddresses>>();

/** The process's list for the database and family, shared by the passes of every network of the family. */
export function watchedAddressesOf(db: Db, family: string): WatchedAddresses {
  let byFamily = perDb.get(db);
  if (!byFamily) perDb.set(db, (byFamily = new Map()));
  let w = byFamily.get(family);
  if (!w) byFamily.set(family, (w = new WatchedAddresses(db, family)));
  return w;
}
