// The embedded default's API (src/runtime/api-thread.ts): the public API in a thread of its own, so that
// request handling never waits behind the worker's activities, watchers and PGlite on the main thread.
// It holds no secret: its environment has the seed and the signing key removed, and buildApiServices refuses them.
// It is made before the main thread has its database and local chains: it loads its modules, then waits for
// the 'start' message with the environment those produced.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { loadConfig } from '../config';
import { openPostgres, type Database } from '../db/client';
import { proxiedDatabase } from '../db/thread-proxy';
import { registry } from '../observability/metrics';
import { describeError } from '../observability/redact';
import { startApiRuntime } from '../runtime/api';
import { buildApiServices } from '../runtime/services';
import type { FromApiThread, ToApiThread } from '../runtime/api-thread';

const { db: dbPort } = workerData as { db?: MessagePort };
const parent = parentPort!;
const say = (m: FromApiThread) => parent.postMessage(m);

async function main(env: NodeJS.ProcessEnv): Promise<void> {
  Object.assign(process.env, env);
  // PGlite belongs to the main thread: statements cross the port. A PostgreSQL server takes a pool of its own.
  let database: Database | undefined;
  try {
    const cfg = loadConfig(process.env);
    database = dbPort ? proxiedDatabase(dbPort) : await openPostgres(cfg.databaseUrl!, { migrate: false });
    const api = await startApiRuntime(buildApiServices(cfg, database, process.env));
    const db = database;
    parent.on('message', (m: ToApiThread) => {
      if (m.type === 'metrics') {
        void registry.getMetricsAsJSON().then((metrics) => say({ type: 'metrics', id: m.id, metrics }));
      } else if (m.type === 'stop') {
        void api
          .stop()
          .then(() => db.close())
          .finally(() => say({ type: 'stopped' }));
      }
    });
    say({ type: 'ready', url: api.url });
  } catch (e) {
    await database?.close().catch(() => undefined);
    say({ type: 'failed', message: describeError(e).message ?? String(e) });
  }
}

parent.on('message', function start(m: ToApiThread) {
  if (m.type !== 'start') return;
  parent.off('message', start);
  void main(m.env);
});
