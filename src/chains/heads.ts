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

/** The subscription request per address family; a family absent here has no head feed (UTXO: polled). */
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
