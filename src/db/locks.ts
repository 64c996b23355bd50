import { Client, type Pool, type PoolClient } from 'pg';
import { logger } from '../observability/logger';

/**
 * Named locks across processes: PostgreSQL session advisory locks on hashtext(name).
 *
 * A lock nobody else holds (the common case: one forward per address_in) is taken with
 * pg_try_advisory_lock on one session this process keeps for that, so a burst of forwards opens no
 * connection of its own: a new connection is a SCRAM exchange and a backend start, slow on a saturated
 * worker (docs/decisions/0013-shared-lock-session.md).
 * A lock another process holds is waited for as before: a blocking pg_advisory_lock on a session of
 * `waitPool`, released on that session.
 *
 * Guards, because one session holds many locks and PostgreSQL's advisory locks are reentrant per session:
 * - one holder per name in this process (`local`, the caller's in-process queue);
 * - two names with the same hashtext never both count as held on the shared session: the second one
 *   gives its reentrant grant back and waits on a pool session like any other contended lock;
 * - a lock is released only on the session it was taken on: after the shared session was lost (its locks
 *   went with it) and replaced, a holder from before releases nothing on the new one.
 * A holder whose session is lost goes on without the lock, as a holder of a lost pool session always did.
 */
export function advisoryLocks(o: {
  url: string;
  waitPool: Pool;
  /** The in-process queue by name (client.ts inProcessLocks). */
  local: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
  /** pg's release, destroying a client whose connection failed. */
  release: (client: PoolClient, failed: unknown) => void;
}): { withLock<T>(name: string, fn: () => Promise<T>): Promise<T>; ifFree(name: string, fn: () => Promise<void>): Promise<boolean>; close(): Promise<void> } {
  const shared = sharedSession(o.url);

  async function onPool<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const client = await o.waitPool.connect();
    let failed: unknown;
    try {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
      try {
        return await fn();
      } finally {
        // A lost connection already dropped the lock with the session; the client is then destroyed.
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]).catch((e: unknown) => (failed = e));
      }
    } catch (e) {
      failed ??= e;
      throw e;
    } finally {
      o.release(client, failed);
    }
  }

  /** fn under the lock taken on the shared session; on a pool session, waiting, when that one cannot take it. */
  const run = async <T>(name: string, fn: () => Promise<T>, held: Held | 'busy' | undefined): Promise<T> => {
    if (held === undefined || held === 'busy') return onPool(name, fn);
    try {
      return await fn();
    } finally {
      await held.release();
    }
  };

  return {
    withLock: <T>(name: string, fn: () => Promise<T>) => o.local(name, async () => run(name, fn, await shared.tryLock(name))),
    /**
     * fn under the lock when no other process holds it; false, without waiting, when one does. For work that
     * the holder is doing anyway (a watcher's pass over the same chain). A session that is away is no
     * answer: then the lock is waited for as withLock does, which also reports a server that is gone.
     */
    ifFree: (name: string, fn: () => Promise<void>) =>
      o.local(name, async () => {
        const held = await shared.tryLock(name);
        if (held === 'busy') return false;
        await run(name, fn, held);
        return true;
      }),
    close: () => shared.close(),
  };
}

interface Held {
  release(): Promise<void>;
}

/** The one session that takes uncontended locks; connected on first use and again after a loss. */
function sharedSession(url: string): { tryLock(name: string): Promise<Held | 'busy' | undefined>; close(): Promise<void> } {
  let closed = false;
  let current: { client: Client; ready: Promise<void>; lost: boolean; held: Set<number>; query: Client['query'] } | undefined;

  const session = () => {
    if (current && !current.lost) return current;
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000, application_name: 'gateway locks' });
    // One statement at a time, in the order asked, as pg's own queue did (the guards below rely on that order):
    // pg 8 warns of a query sent while another runs, and pg 9 drops its queue.
    let tail: Promise<unknown> = Promise.resolve();
    const query = ((text: string, values?: unknown[]) => {
      const next = tail.then(() => client.query(text, values));
      tail = next.catch(() => undefined);
      return next;
    }) as Client['query'];
    const s = { client, ready: Promise.resolve(), lost: false, held: new Set<number>(), query };
    const lose = (e?: Error) => {
      if (s.lost) return;
      s.lost = true;
      if (e && !closed) logger.warn({ err: e.message, held: s.held.size }, 'PostgreSQL lock session lost; its locks went with it');
      client.end().catch(() => undefined);
    };
    client.on('error', lose);
    client.on('end', () => lose());
    s.ready = client.connect().then(() => undefined, (e: unknown) => {
      lose(e instanceof Error ? e : new Error(String(e)));
      throw e;
    });
    current = s;
    return s;
  };

  return {
    /**
     * The lock taken on the shared session; 'busy' when another session holds it; undefined when this session
     * cannot tell (it is away, or another name with the same hash holds the grant here).
     */
    async tryLock(name) {
      if (closed) return undefined;
      const s = session();
      let hash: number;
      try {
        await s.ready;
        const { rows } = await s.query<{ h: number; ok: boolean }>('SELECT hashtext($1) AS h, pg_try_advisory_lock(hashtext($1)) AS ok', [name]);
        if (!rows[0].ok) return 'busy';
        hash = rows[0].h;
      } catch {
        // The session is away: the pool's session waits (and reports a server that is gone).
        return undefined;
      }
      if (s.held.has(hash)) {
        // Another name with the same hash holds it here: the grant was a reentrant one. Give it back and wait elsewhere.
        await s.query('SELECT pg_advisory_unlock($1::int)', [hash]).catch(() => undefined);
        return undefined;
      }
      s.held.add(hash);
      return {
        async release() {
          if (s.lost) return;
          try {
            await s.query('SELECT pg_advisory_unlock($1::int)', [hash]);
          } catch {
            // The session was lost meanwhile: the lock went with it.
          } finally {
            s.held.delete(hash);
          }
        },
      };
    },
    async close() {
      closed = true;
      const s = current;
      current = undefined;
      if (s && !s.lost) {
        s.lost = true;
        await s.client.end().catch(() => undefined);
      }
    },
  };
}
