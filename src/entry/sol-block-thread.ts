// The Solana watcher's block thread (src/chains/sol/block-thread.ts): fetches a getBlock answer and scans its
// bytes for the watched addresses, so that the answer's megabytes live and die on this thread's small heap.
// It imports neither the Solana SDK nor anything else of the gateway's: only the fetch and the byte scan.
import { parentPort } from 'node:worker_threads';
import { postJson } from '../chains/http-post';
import { holdsBlock, watchedTransactionTexts } from '../chains/sol/block-bytes';
import { WatchedBytes } from '../chains/sol/watched-bytes';
import type { ThreadReply, ThreadRequest } from '../chains/sol/block-thread';

const parent = parentPort!;
let watched = new WatchedBytes();

parent.on('message', async (m: ThreadRequest) => {
  if (m.reset) watched = new WatchedBytes();
  for (const a of m.add) watched.add(a);
  let reply: ThreadReply;
  try {
    const { status, bytes } = await postJson(m.url, m.headers, m.body, m.timeoutMs);
    if (status < 200 || status > 299) reply = { id: m.id, status, text: '' };
    // No block object: the caller reads it as any other answer.
    else if (!holdsBlock(bytes)) reply = { id: m.id, status, text: bytes.toString('utf8') };
    else reply = { id: m.id, status, ...watchedTransactionTexts(bytes, watched) };
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    reply = { id: m.id, error: e instanceof Error ? e.message : String(e), code: typeof code === 'string' ? code : undefined };
  }
  parent.postMessage(reply);
});
