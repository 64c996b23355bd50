import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { entryWorker } from '../threads';
import type { ChainMode } from '../chains/config';
import { logger } from '../observability/logger';
import { deriveRun, type RangeDeriver } from './derived-addresses';

export interface DeriveRequest {
  id: number;
  xpub: string;
  networkId: string;
  mode: string;
  /** The first index, as a decimal string. */
  start: string;
  count: number;
}
export type DeriveReply = { id: number; addresses: string[] } | { id: number; error: string };

/** A thread left without work this long ends (a process that creates nothing holds no idle thread). */
const IDLE_MS = 30_000;
/** A run of RUN addresses takes ~50 ms; a thread silent this long is taken for stuck. */
const ANSWER_MS = 10_000;

/**
 * One thread per process that derives runs of deposit addresses from an xpub (src/entry/derive-thread.ts).
 * The API keeps derived_addresses stocked ahead of creates; on its event loop each run of 64 held requests
 * back ~10 ms, and a burst of creates spent a sixth of the API's CPU there. The thread starts on first use,
 * ends when idle, and keeps the process alive only while it owes an answer. Should it fail to start, die
 * or stop answering, `failed` is set and callers derive on their own thread instead: slower, the same addresses.
 */
class DeriveThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (a: string[]) => void; reject: (e: Error) => void }>();
  private idle: NodeJS.Timeout | undefined;
  failed = false;

  derive(xpub: string, networkId: string, mode: ChainMode, start: bigint, count: number): Promise<string[]> {
    const worker = this.start();
    if (this.idle) clearTimeout(this.idle);
    const id = this.nextId++;
    return new Promise<string[]>((resolve, reject) => {
      // Held open while it owes an answer, and only then.
      if (this.waiting.size === 0) worker.ref();
      // A thread that stops answering is given up (a create may be waiting behind this run).
      const late = setTimeout(() => this.lose(worker, `no answer in ${ANSWER_MS} ms`), ANSWER_MS);
      late.unref();
      this.waiting.set(id, {
        resolve: (a) => (clearTimeout(late), resolve(a)),
        reject: (e) => (clearTimeout(late), reject(e)),
      });
      worker.postMessage({ id, xpub, networkId, mode, start: start.toString(), count } satisfies DeriveRequest);
    });
  }

  /** Gives the thread up: what it owed fails (callers derive on their own thread), and so does what comes later. */
  private lose(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.failed = true;
    logger.warn({ why }, 'address derivation thread lost; deriving on the API thread');
    for (const w of this.waiting.values()) w.reject(new Error(`derivation thread lost: ${why}`));
    this.waiting.clear();
    worker.removeAllListeners('exit');
    void worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = entryWorker(path.join(__dirname, '../entry'), 'derive-thread');
    worker.on('message', (m: DeriveReply) => {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if ('error' in m) w.reject(new Error(m.error));
      else w.resolve(m.addresses);
      if (this.waiting.size === 0) {
        worker.unref();
        this.idleSoon(worker);
      }
    });
    worker.on('error', (e) => this.lose(worker, e.message));
    worker.on('exit', (code) => this.lose(worker, `exit ${code}`));
    // After the listeners (one added later would hold the process open again); derive() refs it while it works.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private idleSoon(worker: Worker): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.worker !== worker || this.waiting.size > 0) return;
      this.worker = undefined;
      worker.removeAllListeners('exit');
      void worker.terminate();
    }, IDLE_MS);
    this.idle.unref();
  }
}

const thread = new DeriveThread();

/**
 * A RangeDeriver that runs on the derivation thread, and on the caller's thread (`inline`) once that
 * thread has failed or for a run that fails there.
 */
export function threadDeriver(xpub: string, networkId: string, mode: ChainMode, inline: (index: bigint) => string): RangeDeriver {
  const here: RangeDeriver = async (start, count) => deriveRun(inline, start, count);
  return async (start, count) => {
    if (thread.failed) return here(start, count);
    try {
      return await thread.derive(xpub, networkId, mode, start, count);
    } catch {
      return here(start, count);
    }
  };
}
