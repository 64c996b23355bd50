import { BitcoinRpc, RpcError } from '../chains/utxo/rpc';
import type { HeadFeed, HeadFeedOptions } from './heads';

/** How long one `waitforblockheight` call is held open before the next one replaces it. */
const WAIT_MS = 15_000;
/** Bitcoin Core's answer to a method it does not serve (btcd and bchd answer the same code). */
const METHOD_NOT_FOUND = -32601;

interface Tip {
  hash: string;
  height: number;
}

export interface LongPollFeedOptions extends HeadFeedOptions {
  /** How long the node holds each call (its `timeout`, ms); the HTTP request is given 10 s more. */
  waitMs?: number;
}

/**
 * New heads of a Bitcoin-family node (Bitcoin Core, Knots, Litecoin Core, Bitcoin Cash Node), which has no
 * subscription over its RPC: a `waitforblockheight` call for the block after the last one seen, held open by
 * the node until that block is its tip (or `waitMs` passed), then the next. Waiting for a height rather than
 * for "a new block" misses no block mined between two calls. Like the WebSocket feeds (heads.ts), it only
 * wakes the watcher, which reads the chain over RPC as a poll would; the call holds one of the node's RPC
 * threads (`-rpcthreads`) while it waits. A node that does not serve the call (btcd, bchd) is refused once:
 * polling alone. A failed call is made again after a growing delay; meanwhile the watcher's own interval reads.
 */
export function openLongPollFeed(rpcUrl: string, onHead: () => void, o: LongPollFeedOptions = {}): HeadFeed {
  const waitMs = o.waitMs ?? WAIT_MS;
  const retryMs = o.retryMs ?? 1000;
  const maxRetryMs = o.maxRetryMs ?? 30_000;
  const rpc = new BitcoinRpc(rpcUrl, waitMs + 10_000);
  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let delay = retryMs;

  const run = async () => {
    let live = false;
    try {
      // Height 0 is always reached: the node answers at once with its tip, and says whether it serves the call.
      let tip = await rpc.call<Tip>('waitforblockheight', [0], { signal: stop.signal });
      live = true;
      delay = retryMs;
      o.onState?.('subscribed');
      // A head may have come between the last poll and the feed.
      onHead();
      for (;;) {
        const next = await rpc.call<Tip>('waitforblockheight', [tip.height + 1, waitMs], { signal: stop.signal });
        if (stop.signal.aborted) return;
        // Any other tip is news: a new block, or a reorganisation (to a shorter chain, or at the same height).
        if (next.hash !== tip.hash) onHead();
        tip = next;
      }
    } catch (e) {
      if (stop.signal.aborted) return;
      if (e instanceof RpcError && e.code === METHOD_NOT_FOUND) {
        // A node without the call: polling alone, and no retry that would be refused again.
        o.onState?.('dropped', `subscription refused: ${e.message}`);
        return;
      }
      o.onState?.('dropped', live ? 'connection closed' : 'connection failed');
      timer = setTimeout(() => void run(), delay);
      timer.unref();
      delay = Math.min(delay * 2, maxRetryMs);
    }
  };
  void run();
  return {
    close() {
      stop.abort();
      if (timer) clearTimeout(timer);
    },
  };
}
