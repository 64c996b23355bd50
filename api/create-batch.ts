import { callbackWireKey } from '../src/callbacks/transport';
import type { Db } from '../src/db/client';
import { createConfig, createConfigs, type AddressSource, type BatchedCreate, type CreateOutcome } from '../src/db/queries/create-config';
import type { NewPaymentConfig } from '../src/db/queries/configs';
import { logger } from '../src/observability/logger';
import { describeError } from '../src/observability/redact';

/**
 * Creates of derived addresses grouped into shared statements while others run (SPEC 4.6 unchanged for each).
 * A create that finds fewer than `statements` create statements running runs alone, at once; under load the
 * creates that arrive meanwhile wait for the next free statement and go together (one source and family, at
 * most `batch`, distinct callback wire keys), each answered as if it had run alone (createConfigs). A batch that
 * fails runs each of its creates alone, so each gets its own answer or error. The Solana pool's creates
 * always run alone.
 *
 * Each statement is a write to PostgreSQL that wakes a backend, a commit that waits for its WAL flush, and the
 * driver's work around both; shared, they cost a create less (docs/decisions/0009-create-batching.md).
 */
export interface CreateBatchOptions {
  /** Create statements running at once (of the API's pool of 10 connections). */
  statements: number;
  /** Creates in one statement at most. */
  batch: number;
}

export const CREATE_BATCH_DEFAULTS: CreateBatchOptions = { statements: 4, batch: 16 };

interface Waiting extends BatchedCreate {
  from: AddressSource & { kind: 'derived' };
  resolve(outcome: CreateOutcome): void;
  reject(e: unknown): void;
}

export class CreateBatcher {
  /** Waiting creates per derived source and family, in arrival order. */
  private readonly queues = new Map<string, Waiting[]>();
  private running = 0;

  constructor(
    private readonly db: Db,
    private readonly opts: CreateBatchOptions = CREATE_BATCH_DEFAULTS,
  ) {}

  /** createConfig's outcome for this create. */
  create(input: NewPaymentConfig, from: AddressSource, outCanonical: string): Promise<CreateOutcome> {
    if (from.kind !== 'derived') return createConfig(this.db, input, from, outCanonical);
    return new Promise<CreateOutcome>((resolve, reject) => {
      const key = `${from.source}\n${input.family}`;
      let queue = this.queues.get(key);
      if (!queue) this.queues.set(key, (queue = []));
      queue.push({ input, outCanonical, from, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.opts.statements) {
      const batch = this.take();
      if (!batch) return;
      this.running++;
      void this.run(batch).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  /** Up to `batch` creates of the queue that has waited longest (Map order), with distinct callback wire keys (aliases apart). */
  private take(): Waiting[] | undefined {
    const first = this.queues.entries().next();
    if (first.done) return undefined;
    const [key, queue] = first.value;
    const keys = new Set<string>();
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    for (const w of queue) {
      const key = callbackWireKey(w.input.callbackUrl);
      if (batch.length < this.opts.batch && !keys.has(key)) {
        keys.add(key);
        batch.push(w);
      } else rest.push(w);
    }
    // The queue goes to the back of the order: another source's creates go next.
    this.queues.delete(key);
    if (rest.length > 0) this.queues.set(key, rest);
    return batch;
  }

  private async run(batch: Waiting[]): Promise<void> {
    if (batch.length > 1) {
      let outcomes: CreateOutcome[] | undefined;
      try {
        outcomes = await createConfigs(this.db, batch, batch[0].from, batch[0].input.family);
      } catch (e) {
        logger.info({ creates: batch.length, err: describeError(e) }, 'a create batch failed; each of its creates runs alone');
      }
      if (outcomes) {
        batch.forEach((w, i) => w.resolve(outcomes[i]));
        return;
      }
    }
    await Promise.all(
      batch.map(async (w) => {
        try {
          w.resolve(await createConfig(this.db, w.input, w.from, w.outCanonical));
        } catch (e) {
          w.reject(e);
        }
      }),
    );
  }
}
