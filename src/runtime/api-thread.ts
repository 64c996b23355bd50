import path from 'node:path';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { entryWorker } from '../threads';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { Database } from '../db/client';
import { serveQueries } from '../db/thread-proxy';
import { SECRET_VARIABLES } from './services';

type Metrics = MetricObjectWithValues<MetricValue<string>>[];
export type ToApiThread = { type: 'start'; env: NodeJS.ProcessEnv } | { type: 'metrics'; id: number } | { type: 'stop' };
export type FromApiThread =
  | { type: 'ready'; url: string }
  | { type: 'failed'; message: string }
  | { type: 'metrics'; id: number; metrics: Metrics }
  | { type: 'stopped' };

export interface ApiThread {
  url: string;
  /** The thread's own registry (its HTTP metrics), for the process's /metrics. */
  metrics(): Promise<Metrics>;
  stop(): Promise<void>;
}

/** The thread loading its modules; start() gives it the database and the environment, and serves. */
export interface LoadingApiThread {
  start(database: Database, env: NodeJS.ProcessEnv): Promise<ApiThread>;
  /** Ends a thread that was never started (the gateway failed to start). */
  terminate(): Promise<void>;
}

/** The environment without what the API thread must never hold: the worker's secrets (DESIGN 9). */
function withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const k of Object.keys(SECRET_VARIABLES)) delete out[k];
  return out;
}

/**
 * The embedded default's public API in a worker thread (issue 12): Express, validation, derivation and
 * JSON run beside the main thread's worker, watchers and PGlite instead of queueing behind them. With
 * PGlite (`pglite`) the thread's statements are run by the main thread (src/db/thread-proxy.ts); with
 * DATABASE_URL the thread has its own pool. Its environment is the gateway's without the seed and the
 * signing key. The thread is made at once and loads its modules while the main thread opens the database
 * and starts the servers; it serves once start() hands it the environment they produced.
 */
export function loadApiThread(opts: { pglite: boolean }): LoadingApiThread {
  let dbPort;
  let served: MessagePort | undefined;
  if (opts.pglite) {
    const { port1, port2 } = new MessageChannel();
    served = port1;
    dbPort = port2;
  }
  const worker = entryWorker(path.join(__dirname, '../entry'), 'api-thread', {
    env: withoutSecrets(process.env),
    workerData: { db: dbPort },
    transferList: dbPort ? [dbPort] : [],
  });
  // Until start(), an early death is kept for start() to report.
  let early: Error | undefined;
  const onEarlyError = (e: Error) => (early ??= e);
  const onEarlyExit = (code: number) => (early ??= new Error(`API thread exited with code ${code} before it was ready`));
  worker.on('error', onEarlyError);
  worker.on('exit', onEarlyExit);
  return {
    terminate: async () => void (await worker.terminate()),
    async start(database, env) {
      if (served) {
        if (!database.pglite) throw new Error('the API thread was made for PGlite, the database is not');
        serveQueries(database.pglite, served);
      }
      const url = await new Promise<string>((resolve, reject) => {
        if (early) return reject(early);
        const onExit = (code: number) => reject(new Error(`API thread exited with code ${code} before it was ready`));
        worker.once('error', reject);
        worker.once('exit', onExit);
        worker.on('message', function first(m: FromApiThread) {
          if (m.type !== 'ready' && m.type !== 'failed') return;
          worker.off('message', first);
          worker.off('exit', onExit);
          worker.off('error', reject);
          if (m.type === 'ready') resolve(m.url);
          else void worker.terminate().finally(() => reject(new Error(`API failed to start: ${m.message}`)));
        });
        worker.postMessage({ type: 'start', env: withoutSecrets(env) } satisfies ToApiThread);
      });
      worker.off('error', onEarlyError);
      worker.off('exit', onEarlyExit);
      return serving(worker, url);
    },
  };
}

/** The API thread, made and started at once. */
export function startApiThread(database: Database, env: NodeJS.ProcessEnv): Promise<ApiThread> {
  return loadApiThread({ pglite: Boolean(database.pglite) }).start(database, env);
}

function serving(worker: Worker, url: string): ApiThread {
  // A thread that dies later takes the process down with it, as an API failure in the process would.
  const onDeath = (e: unknown) => {
    console.error('API thread failed:', e instanceof Error ? e.message : e);
    process.exit(1);
  };
  worker.on('error', onDeath);
  let stopping = false;
  worker.on('exit', (code) => {
    if (!stopping) onDeath(new Error(`exited with code ${code}`));
  });
  let nextId = 0;
  return {
    url,
    metrics: () =>
      new Promise<Metrics>((resolve) => {
        const id = nextId++;
        // A thread that does not answer within 2 s leaves its figures out of this scrape, not the scrape hanging.
        const timer = setTimeout(() => {
          worker.off('message', on);
          resolve([]);
        }, 2_000);
        const on = (m: FromApiThread) => {
          if (m.type !== 'metrics' || m.id !== id) return;
          clearTimeout(timer);
          worker.off('message', on);
          resolve(m.metrics);
        };
        worker.on('message', on);
        worker.postMessage({ type: 'metrics', id } satisfies ToApiThread);
      }),
    async stop() {
      stopping = true;
      // In-flight requests finish (the server closes gracefully); a thread that hangs is ended at 5 s.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5_000);
        worker.on('message', (m: FromApiThread) => {
          if (m.type === 'stopped') {
            clearTimeout(timer);
            resolve();
          }
        });
        worker.postMessage({ type: 'stop' } satisfies ToApiThread);
      });
      await worker.terminate();
    },
  };
}
