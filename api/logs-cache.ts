import type { Hearer, Listener } from '../src/db/client';
import { logsCacheReads } from '../src/observability/metrics';
import { cachedBody, type CachedBody } from './cached-body';

/** The channel the database's triggers (drizzle/0000_init.sql) name a changed configuration on. */
export const LOGS_CHANNEL = 'gateway_logs';

/** Notices remembered for reads in flight; a read that began more notices ago than this is not stored. */
const RECENT = 1_024;

interface Entry {
  /** What a notice may name to make this body untrue: its configuration, and 'tip:<network>' if it counts from the tip. */
  names: string[];
  body: string;
  /** Its bytes and ETag, made at its first serving (sendCached). */
  served?: CachedBody;
}

export interface LogsCacheLimits {
  /** Bodies kept at most (the oldest go first). */
  entries: number;
  /** Characters kept at most, summed over the bodies. */
  chars: number;
  /** A body longer than this is never kept. */
  bodyChars: number;
}

const DEFAULT_LIMITS: LogsCacheLimits = { entries: 10_000, chars: 64 * 1024 * 1024, bodyChars: 1024 * 1024 };

/**
 * GET /logs bodies, kept exactly as long as they are true. The database names, on channel gateway_logs,
 * every configuration whose payments or delivery attempts a transaction changed, when it commits; the
 * cache forgets that configuration's bodies when it hears so.
 *
 * - A kept body is served only after a round trip on the listening connection that began after the
 *   request arrived (shared by the requests that arrive meanwhile): PostgreSQL has then sent every notice
 *   of a commit made before the request, so a read sees every change committed before it was asked, as a
 *   read of the database would.
 * - A read in flight when a notice for its configuration arrives is not kept (it may have read before).
 * - While the listening connection is down nothing is served or kept; all is forgotten when it is back,
 *   since notices sent meanwhile are lost.
 * - A body that counts a waiting deposit's confirmations from the chain's tip is also forgotten when the
 *   tip of its network moves (a notice names 'tip:' and the network).
 */
export class LogsCache implements Hearer {
  private readonly entries = new Map<string, Entry>();
  private readonly byName = new Map<string, Set<string>>();
  private chars = 0;
  private heard = false;
  /** Notices heard so far (each loss and each ready counts as one naming everything). */
  private seq = 0;
  private readonly recent: string[] = new Array<string>(RECENT);
  private listener: Listener | undefined;
  /** The round trip in flight, and the one that starts when it ends (for requests that came meanwhile). */
  private current: Promise<boolean> | undefined;
  private next: Promise<boolean> | undefined;
  hits = 0;
  misses = 0;

  constructor(private readonly limits: LogsCacheLimits = DEFAULT_LIMITS) {}

  /** Starts hearing the database's notices through `listen` (Database.listen bound to LOGS_CHANNEL). */
  attach(listen: (hearer: Hearer) => Listener): this {
    this.listener = listen(this);
    return this;
  }

  async close(): Promise<void> {
    await this.listener?.close();
  }

  /** The kept body for `key`, once every notice of a commit made before this call has been heard. */
  async lookup(key: string): Promise<string | undefined> {
    return (await this.find(key))?.body;
  }

  /** lookup's body as the bytes and ETag to serve (made once per kept body). */
  async lookupServed(key: string): Promise<CachedBody | undefined> {
    const entry = await this.find(key);
    if (entry) entry.served ??= cachedBody(entry.body);
    return entry?.served;
  }

  private async find(key: string): Promise<Entry | undefined> {
    const entry = this.heard && this.entries.has(key) && (await this.sync()) && this.heard ? this.entries.get(key) : undefined;
    if (entry === undefined) this.misses++;
    else this.hits++;
    logsCacheReads.inc({ result: entry === undefined ? 'miss' : 'hit' });
    return entry;
  }

  /** A round trip on the listening connection that starts now or after the one in flight. */
  private sync(): Promise<boolean> {
    if (!this.current) return this.start();
    this.next ??= this.current.then(() => {
      this.next = undefined;
      return this.start();
    });
    return this.next;
  }

  private start(): Promise<boolean> {
    const listener = this.listener;
    const trip: Promise<boolean> = (listener ? listener.ping().then(() => true, () => false) : Promise.resolve(false)).finally(() => {
      if (this.current === trip) this.current = undefined;
    });
    this.current = trip;
    return trip;
  }

  /** Marks the start of a read whose result may be kept: pass it to put(). */
  begin(): number {
    return this.heard ? this.seq : -1;
  }

  /**
   * Keeps `body` for `key` unless a notice naming one of `names` (its configuration id, and 'tip:<network>'
   * when it counts from the tip) or everything was heard since `since`.
   */
  put(key: string, names: string[], body: string, since: number): void {
    if (!this.heard || since < 0 || this.seq - since >= RECENT || body.length > this.limits.bodyChars) return;
    for (let s = since + 1; s <= this.seq; s++) {
      const named = this.recent[s % RECENT];
      if (named === '*' || names.includes(named)) return;
    }
    this.drop(key);
    this.entries.set(key, { names, body });
    this.chars += body.length;
    for (const name of names) {
      let keys = this.byName.get(name);
      if (!keys) this.byName.set(name, (keys = new Set()));
      keys.add(key);
    }
    for (const [oldest] of this.entries) {
      if (this.entries.size <= this.limits.entries && this.chars <= this.limits.chars) break;
      this.drop(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  notice(payload: string): void {
    this.recent[++this.seq % RECENT] = payload;
    if (payload === '*') this.clear();
    else for (const key of this.byName.get(payload) ?? []) this.drop(key);
  }

  ready(): void {
    this.notice('*');
    this.heard = true;
  }

  lost(): void {
    this.heard = false;
    this.notice('*');
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.chars -= e.body.length;
    for (const name of e.names) {
      const keys = this.byName.get(name);
      keys?.delete(key);
      if (keys?.size === 0) this.byName.delete(name);
    }
  }

  private clear(): void {
    this.entries.clear();
    this.byName.clear();
    this.chars = 0;
  }
}
