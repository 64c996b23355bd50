import path from 'node:path';
import type { ResourceLimits, Worker } from 'node:worker_threads';
import { entryWorker } from '../../threads';
import { NodeUnavailableError } from '../adapter';
import type { Endpoint } from '../endpoints';

/** A getBlock request to one endpoint, with the watched addresses added since the thread's last request. */
export interface ThreadRequest {
  id: number;
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** The thread's table starts afresh (a new list, or a new thread) before `add` is added. */
  reset: boolean;
  add: string[];
}

/**
 * The thread's reading of one answer: its HTTP status and, for a 2xx answer holding a block object, the
 * block's hash (null when the scan found no block in it) and the JSON text of each transaction that names
 * a watched address; for any other answer (an error answer, a status), its text.
 */
export type ThreadReply =
  | { id: number; status: number; blockhash: string | null; txs: string[] }
  | { id: number; status: number; text: string }
  | { id: number; error: string; code?: string };

export type ThreadAnswer = Exclude<ThreadReply, { error: string }>;

/** A thread that gives no answer this long after a request's own timeout is taken for stuck. */
const GRACE_MS = 5_000;

/**
 * The thread that fetches Solana blocks and scans their bytes for the watched addresses (src/entry/sol-block-
 * thread.ts), handing back only the few transactions that name one. A mainnet block's answer is several
 * megabytes of socket buffers, text and strings; made on the main thread, each of them grew the main heap
 * (the Temporal worker's and everything else's) enough to cost a full collection of it per block, where the
 * thread's own small heap is collected for little. Endpoint choice, credentials and the classification of
 * answers stay with the caller (./block-reader.ts). A thread that dies or stops answering fails what it owed
 * as the node being unavailable (the watcher reads those blocks again on its next pass) and the next request
 * starts another.
 */
export class SolBlockThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (a: ThreadAnswer) => void; reject: (e: Error) => void }>();
  /** The watched list whose addresses the current thread holds, and how many of them. */
  private sent: { worker: Worker; list: readonly string[]; synced: number } | undefined;

  /** `limits`: the thread's heap bounds (its answers and tables are small; a node's huge answer ends it, not the process). */
  constructor(private readonly limits: ResourceLimits = { maxOldGenerationSizeMb: 256 }) {}

  /** One getBlock `body` to `ep`; `watched`: the watched addresses, a list that only grows (a new list starts over). */
  read(ep: Endpoint, body: string, timeoutMs: number, watched: readonly string[]): Promise<ThreadAnswer> {
    const worker = this.start();
    let reset = false;
    if (this.sent?.worker !== worker || this.sent.list !== watched) {
      this.sent = { worker, list: watched, synced: 0 };
      reset = true;
    }
    const add = watched.slice(this.sent.synced);
    this.sent.synced = watched.length;
    const id = this.nextId++;
    return new Promise<ThreadAnswer>((resolve, reject) => {
      // Held open while it owes an answer, and only then.
      if (this.waiting.size === 0) worker.ref();
      const late = setTimeout(() => this.lose(worker, `no answer in ${timeoutMs + GRACE_MS} ms`), timeoutMs + GRACE_MS);
      late.unref();
      this.waiting.set(id, {
        resolve: (a) => (clearTimeout(late), resolve(a)),
        reject: (e) => (clearTimeout(late), reject(e)),
      });
      worker.postMessage({ id, url: ep.url, headers: ep.headers, body, timeoutMs, reset, add } satisfies ThreadRequest);
    });
  }

  close(): void {
    if (this.worker) this.lose(this.worker, 'closed');
  }

  /** Gives the thread up: what it owed fails as the node being unavailable; the next request starts another. */
  private lose(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.sent = undefined;
    for (const w of this.waiting.values()) w.reject(new NodeUnavailableError(`Solana block thread lost: ${why}`));
    this.waiting.clear();
    worker.removeAllListeners('exit');
    void worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = entryWorker(path.join(__dirname, '../../entry'), 'sol-block-thread', { resourceLimits: this.limits });
    worker.on('message', (m: ThreadReply) => {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      // A transport failure keeps its socket code, which tells how the endpoint failed (./rpc.ts's networkCode).
      if ('error' in m) w.reject(Object.assign(new Error(m.error), { code: m.code }));
      else w.resolve(m);
      if (this.waiting.size === 0) worker.unref();
    });
    worker.on('error', (e) => this.lose(worker, e.message));
    worker.on('exit', (code) => this.lose(worker, `exit ${code}`));
    // After the listeners (one added later would hold the process open again); read() refs it while it works.
    worker.unref();
    this.worker = worker;
    return worker;
  }
}
