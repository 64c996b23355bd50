import { NETWORKS } from '../domain/assets';
import { confirmationsAtDetection } from '../domain/finality';
import type { Db } from '../db/client';
import { anyConfigOf, configsPaid, readCursor, writeCursor, type WatchedConfig } from '../db/queries/watch';
import type { ChainAdapter, Cursor, ObservedDeposit, ScanBatch, ScannedBlock } from '../chains/adapter';
import { firstStart } from './first-start';
import { watchedAddressesOf } from './watched-addresses';
import { observeWatcher } from '../observability/chain-metrics';

export type { WatchedConfig };
export { readCursor, writeCursor };

export interface MatchedDeposit {
  deposit: ObservedDeposit;
  config: WatchedConfig;
  /**
   * The deposit's confirmations as the watcher saw them: blocks from its block to the tip of the scan,
   * at least 1 (it is mined); 0 for the sol family, whose finality only the deposit's own check reports.
   */
  confirmations: number;
}


export interface ScanOptions {
  maxBlocks?: number;
  /**
   * Called with each block's matches before the cursor moves past that block; if it throws, the cursor
   * stays and the block is read again next time. Starting deposit workflows here (workflow ID =
   * depositKey, so a re-read starts nothing twice) makes a crash between the two harmless.
   */
  onMatch?: (matches: MatchedDeposit[], block: ScannedBlock) => Promise<void>;
  /**
   * Called once the batch is read and the cursor moved, with the height the pass started from: the
   * worker pushes its hints to the deposit workflows here (src/detection/push.ts). A failure is the
   * caller's to log; the cursor stays moved (a lost hint only delays a workflow to its fallback timer).
   */
  onBatch?: (before: bigint | null, batch: ScanBatch) => Promise<void>;
  /**
   * The head a network without a cursor starts after (default: the current head), unless configurations
   * of the network were made before its block: then before the first of them (src/detection/first-start.ts).
   */
  startAfter?: Cursor;
}

/**
 * The configurations a block pays: one indexed query on (family, address_in) for all of the block's
 * candidate recipients — never one call per watched address (DESIGN 6). A deposit matches a
 * configuration that takes its asset: the one it was created for, or another of the same family it was
 * reused for (config_tickers). Anything else sent to the address (e.g. the gas tank's top-ups) is not a payment.
 */
export async function matchBlock(db: Db, network: string, block: ScannedBlock, tip?: bigint): Promise<MatchedDeposit[]> {
  const recipients = [...new Set(block.deposits.map((d) => d.recipient))];
  if (recipients.length === 0) return [];
  const family = NETWORKS[network].addressFamily;
  const rows = await configsPaid(db, family, recipients);
  const byAddress = new Map<string, { config: WatchedConfig; tickers: Set<string> }>();
  for (const { config, accepted } of rows) {
    const entry = byAddress.get(config.addressIn) ?? { config, tickers: new Set([config.ticker]) };
    if (accepted) entry.tickers.add(accepted);
    byAddress.set(config.addressIn, entry);
  }
  const out: MatchedDeposit[] = [];
  const confirmations = confirmationsAtDetection(network, block.height, tip ?? block.height);
  for (const d of block.deposits) {
    const entry = byAddress.get(d.recipient);
    if (entry?.tickers.has(d.ticker) && (block.confirm?.(d) ?? true)) out.push({ deposit: d, config: entry.config, confirmations });
  }
  return out;
}

/** Networks with a watched address, per database: a configuration is never deleted, so once known is enough. */
const watchedNetworks = new WeakMap<Db, Set<string>>();

/** Whether any configuration of the network's address family exists (ScanScope.watched). */
async function anyWatched(db: Db, network: string): Promise<boolean> {
  let known = watchedNetworks.get(db);
  if (known?.has(network)) return true;
  if (!(await anyConfigOf(db, NETWORKS[network].addressFamily))) return false;
  if (!known) watchedNetworks.set(db, (known = new Set()));
  known.add(network);
  return true;
}

function sameCursor(a: Cursor, b: Cursor | null): boolean {
  return b !== null && a.height === b.height && a.hash === b.hash;
}

/**
 * One pass of a network's watcher: reads the blocks after the durable cursor once each, matches them
 * against payment_configs, and moves the cursor block by block. A restart continues from the last
 * stored block (nothing missed); a block is re-read only if onMatch failed for it (nothing repeated
 * beyond what the deposit workflow ID absorbs). A reorg at the cursor rewinds it a few blocks.
 */
export async function scanOnce(adapter: ChainAdapter, db: Db, network: string, opts: ScanOptions = {}): Promise<MatchedDeposit[]> {
  const stored = await readCursor(db, network);
  let from = stored;
  if (!from) {
    // No cursor yet: the head (the caller's first, or now), or before the network's first configuration.
    const head = opts.startAfter ?? (await adapter.scan(null)).cursor;
    from = await firstStart(adapter, db, network, head);
    if (from === head && !opts.startAfter) {
      await writeCursor(db, network, head);
      return [];
    }
  }
  const watched = await anyWatched(db, network);
  const list = watchedAddressesOf(db, NETWORKS[network].addressFamily);
  const batch = await adapter.scan(from, opts.maxBlocks, { watched, watchedAddresses: () => list.current() });
  // A configuration made while these blocks were read without what only payments need (EVM traces) may
  // have been paid in them: nothing is kept, and the next pass reads them again with it.
  if (!watched && (await anyWatched(db, network))) return [];
  const matched: MatchedDeposit[] = [];
  const last = batch.blocks[batch.blocks.length - 1];
  const tip = last && last.height > batch.cursor.height ? last.height : batch.cursor.height;
  for (const block of batch.blocks) {
    const matches = await matchBlock(db, network, block, tip);
    if (matches.length && opts.onMatch) await opts.onMatch(matches, block);
    matched.push(...matches);
    await writeCursor(db, network, { height: block.height, hash: block.hash });
  }
  // The batch may end past its last block (skipped Solana slots) or behind the stored cursor (reorg); a pass
  // that found nothing new writes nothing.
  const moved = last ? last.height !== batch.cursor.height || last.hash !== batch.cursor.hash : !sameCursor(batch.cursor, stored);
  if (moved) await writeCursor(db, network, batch.cursor);
  observeWatcher(network, batch.cursor.height);
  if (opts.onBatch) await opts.onBatch(from.height, batch);
  return matched;
}

export interface WatchersOptions {
  networks: string[];
  adapter(network: string): Promise<ChainAdapter>;
  db: Db;
  /** Cross-process lock by name: watchers of several workers take turns per network. Default: none. */
  withLock?: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
  /**
   * The lock, when no other process holds it; false at once when one does (src/db/locks.ts ifFree). Given,
   * a pass whose network another worker's watcher is reading right now is skipped instead of waited for
   * and made again over the same blocks: that worker's pass pushes what they hold.
   */
  ifFree?: (name: string, fn: () => Promise<void>) => Promise<boolean>;
  /** Deposits matched in a block (workflow starts go here; idempotent by workflow ID = depositKey). */
  onMatch(network: string, matches: MatchedDeposit[], block: ScannedBlock): Promise<void>;
  /** After each batch (the push to waiting workflows); its failure is reported and the loop goes on. */
  onBatch?(network: string, before: bigint | null, batch: ScanBatch): Promise<void>;
  intervalMs: number;
  /**
   * The poll interval of a network while its head feed is live (`heads` said so): the feed wakes the loop at
   * each new head, and the poll only covers a notification lost on the way. Default: intervalMs.
   */
  feedIntervalMs?: number;
  onError?(network: string, e: unknown): void;
  /**
   * Wakes a network's loop between its polls: called once per network with the loop's wake function and
   * a function to tell whether the feed is live (subscribed) now; returns the feed to close at stop
   * (src/detection/heads.ts: the node's new-head notifications), or undefined for a network that is polled
   * only. A wake during a pass runs one more pass at once.
   */
  heads?(network: string, wake: () => void, live: (on: boolean) => void): { close(): void } | undefined;
}

/**
 * The watcher: one loop per network — scanOnce under the network's lock, sleep, repeat — until stop().
 * The sleep ends early when the node announces a new head (`heads`), and lasts feedIntervalMs while the
 * feed is live. A pass another process is making (ifFree) is skipped. A node that is down is retried
 * every interval; the durable cursor guarantees no block is skipped.
 * The worker process runs exactly this (src/runtime/worker.ts).
 */
export function startWatchers(opts: WatchersOptions): { stop(): Promise<void> } {
  let stopping = false;
  const wakes: Array<() => void> = [];
  const feeds: Array<{ close(): void }> = [];
  const lock = opts.withLock ?? (<T>(_name: string, fn: () => Promise<T>) => fn());
  const loops = opts.networks.map(async (network) => {
    // A head that came while a pass ran (or before the first) is read by the next pass, without a sleep.
    let woken = false;
    let live = false;
    let sleeping: (() => void) | undefined;
    const wake = () => {
      woken = true;
      sleeping?.();
    };
    wakes.push(wake);
    // A feed that drops ends a long sleep at once: the loop polls at the short interval until it is back.
    const feed = opts.heads?.(network, wake, (on) => {
      live = on;
      if (!on) sleeping?.();
    });
    if (feed) feeds.push(feed);
    // Where the network starts if no cursor is stored yet: the head this loop saw first, read from the node
    // before the database is asked. Left to the first pass that reaches the database, the start would be the
    // head at that moment: a database away since this process started would move it past the deposits mined
    // meanwhile, to addresses the API had already handed out (they were never read).
    let firstHead: Cursor | undefined;
    while (!stopping) {
      woken = false;
      try {
        const adapter = await opts.adapter(network);
        firstHead ??= (await adapter.scan(null)).cursor;
        const startAfter = firstHead;
        const pass = () =>
          scanOnce(adapter, opts.db, network, {
            startAfter,
            onMatch: (matches, block) => opts.onMatch(network, matches, block),
            onBatch: opts.onBatch
              ? async (before, batch) => {
                  try {
                    await opts.onBatch!(network, before, batch);
                  } catch (e) {
                    opts.onError?.(network, e);
                  }
                }
              : undefined,
          });
        if (opts.ifFree) await opts.ifFree(`watch:${network}`, async () => void (await pass()));
        else await lock(`watch:${network}`, pass);
      } catch (e) {
        opts.onError?.(network, e);
      }
      if (stopping || woken) continue;
      await new Promise<void>((r) => {
        const timer = setTimeout(done, live ? (opts.feedIntervalMs ?? opts.intervalMs) : opts.intervalMs);
        timer.unref();
        function done() {
          clearTimeout(timer);
          sleeping = undefined;
          r();
        }
        sleeping = done;
      });
    }
  });
  return {
    async stop() {
      stopping = true;
      for (const f of feeds) f.close();
      for (const w of wakes) w();
      await Promise.all(loops);
    },
  };
}
