import WebSocket from 'ws';
import { NETWORKS } from '../domain/assets';

/**
 * New-head notifications from a node's WebSocket endpoint, so that a watcher reads a block the moment the
 * node has it instead of at its next poll: `eth_subscribe newHeads` on EVM nodes, `slotSubscribe` on
 * Solana. A notification carries no data the watcher trusts: it only wakes the watcher, which reads the
 * chain over RPC as a poll would. A dropped connection is opened again with a growing delay; meanwhile,
 * and whenever the node sends nothing, the watcher's own interval still reads the chain.
 */
export interface HeadFeed {
  close(): void;
}

/** The subscription request per address family; UTXO nodes have none: their feed is a long poll (long-poll-feed.ts). */
const SUBSCRIBE: Record<string, { method: string; params: unknown[]; notification: string }> = {
  evm: { method: 'eth_subscribe', params: ['newHeads'], notification: 'eth_subscription' },
  sol: { method: 'slotSubscribe', params: [], notification: 'slotNotification' },
};

export function hasHeadFeed(network: string): boolean {
  return NETWORKS[network]?.family !== undefined && NETWORKS[network].family in SUBSCRIBE;
}

export interface HeadFeedOptions {
  /** First delay before opening a dropped connection again; doubles up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
  /** Told when the feed connects, subscribes, drops or fails; never with the URL's credentials. */
  onState?: (state: 'subscribed' | 'dropped', detail?: string) => void;
  /** A connection that leaves a ping unanswered this long is taken for dead and opened again. */
  pingMs?: number;
}

/** Subscribes to `network`'s new heads at `wsUrl` and calls `onHead` at each notification until close(). */
export function openHeadFeed(network: string, wsUrl: string, onHead: () => void, o: HeadFeedOptions = {}): HeadFeed {
  const sub = SUBSCRIBE[NETWORKS[network]?.family ?? ''];
  if (!sub) throw new Error(`${network} has no head feed`);
  const retryMs = o.retryMs ?? 1000;
  const maxRetryMs = o.maxRetryMs ?? 30_000;
  let closed = false;
  let socket: WebSocket | undefined;
  let timer: NodeJS.Timeout | undefined;
  let delay = retryMs;
  const pingMs = o.pingMs ?? 30_000;

  const open = () => {
    if (closed) return;
    const ws = new WebSocket(wsUrl, { handshakeTimeout: 10_000 });
    socket = ws;
    let subscribed = false;
    // A node gone without closing the connection (half-open TCP) would leave the feed silent for ever.
    let alive = true;
    const ping = setInterval(() => {
      if (!alive) return void ws.terminate();
      alive = false;
      ws.ping();
    }, pingMs);
    ping.unref();
    ws.on('pong', () => (alive = true));
    ws.on('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: sub.method, params: sub.params })));
    ws.on('message', (data) => {
      let m: { id?: unknown; method?: unknown; result?: unknown; error?: { message?: unknown } };
      try {
        m = JSON.parse(String(data)) as typeof m;
      } catch {
        return;
      }
      if (m.method === sub.notification) {
        onHead();
      } else if (m.id === 1 && !subscribed) {
        if (m.error) {
          // A node without subscriptions: polling alone, and no retry that would be refused again.
          o.onState?.('dropped', `subscription refused: ${String(m.error.message ?? 'error')}`);
          closed = true;
          ws.close();
          return;
        }
        subscribed = true;
        delay = retryMs;
        o.onState?.('subscribed');
        // A head may have come between the last poll and the subscription.
        onHead();
      }
    });
    ws.on('error', () => undefined); // 'close' follows and retries
    ws.on('close', () => {
      clearInterval(ping);
      if (socket === ws) socket = undefined;
      if (closed) return;
      o.onState?.('dropped', subscribed ? 'connection closed' : 'connection failed');
      timer = setTimeout(open, delay);
      timer.unref();
      delay = Math.min(delay * 2, maxRetryMs);
    });
  };
  open();
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      socket?.terminate();
      socket = undefined;
    },
  };
}

/**
 * The worker's head feeds, as seen by its activities: the forward activity watches for the inclusion of
 * what it has just broadcast at each new head of its network, for a short window, instead of ending and
 * leaving the watcher to signal the workflow (activities/forward-watch.ts). No live feed, no window.
 */
export interface HeadWatch {
  /** How long a forward just broadcast on `network` is watched for by its activity; 0 while its feed is not live. */
  watchMs(network: string): number;
  /** How many heads of `network` were announced so far. */
  seen(network: string): number;
  /** Resolves true once more than `after` heads of `network` were announced (at once if they were), false when `ms` passed first. */
  next(network: string, after: number, ms: number): Promise<boolean>;
}

/** A HeadWatch the worker's head feeds report to (`head` at each notification, `live` on (un)subscription). */
export function headHub(watchMs: number): HeadWatch & { head(network: string): void; live(network: string, on: boolean): void } {
  const waiters = new Map<string, Set<() => void>>();
  const counts = new Map<string, number>();
  const live = new Set<string>();
  const seen = (network: string) => counts.get(network) ?? 0;
  return {
    watchMs: (network) => (watchMs > 0 && live.has(network) ? watchMs : 0),
    seen,
    next(network, after, ms) {
      if (seen(network) > after) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        let set = waiters.get(network);
        if (!set) waiters.set(network, (set = new Set()));
        const waiting = set;
        const done = (head: boolean) => {
          clearTimeout(timer);
          waiting.delete(wake);
          resolve(head);
        };
        const wake = () => done(true);
        const timer = setTimeout(() => done(false), Math.max(0, ms));
        waiting.add(wake);
      });
    },
    head(network) {
      counts.set(network, seen(network) + 1);
      for (const wake of [...(waiters.get(network) ?? [])]) wake();
    },
    live(network, on) {
      if (on) live.add(network);
      else live.delete(network);
    },
  };
}
