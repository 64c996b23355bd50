import { Client, type Pool, type PoolClient } from 'pg';
import { logger } from '../observability/logger';

/**
 * Named locks across processes: PostgreSQL session advisory locks on hashtext(name).
 *
 * A lock nobody else holds (the common case: one forward per address_in) is taken with
 * pg_try_advisory_lock on one session this process keeps for that, so a burst of forwards opens no
 * connection of its own. Measured in bench/pipeline.ts: with a session per holder, a burst of 40 forwards
 * after a quiet wait opened a connection per forward, 0.2–0.6 s each on a saturated worker (a SCRAM
 * exchange and a backend start); on the one session a lock took 0.14 s p50 in the same burst.
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

/** One step for the shared session: take a lock by name (try), or release one by its hash. */
type Op = { take: string } | { release: number };

/** PostgreSQL's answer to an Op: the name's hash and whether it was granted (take), or whether it was held (release). */
interface Answer {
  h: number;
  ok: boolean;
}

/**
 * Every step waiting for the shared session, in the order asked, in one statement: unnest yields the steps in
 * order and each row's CASE runs its one function as the row is produced, so the steps take effect in the
 * order they were asked, as one statement each did before. Under a burst, the holders' steps wait for one
 * round trip, not for one each: bench/pipeline.ts's due burst queued about 250 takes and 250 releases on
 * this session, and a take waited 53 to 94 ms at the median and up to 430 ms behind the others.
 */
const STEPS = `SELECT CASE WHEN s.take THEN hashtext(s.name) ELSE s.hash END AS h,
  CASE WHEN s.take THEN pg_try_advisory_lock(hashtext(s.name)) ELSE pg_advisory_unlock(s.hash) END AS ok, s.i
  FROM unnest($1::boolean[], $2::text[], $3::integer[]) WITH ORDINALITY AS s(take, name, hash, i)`;

/** The one session that takes uncontended locks; connected on first use and again after a loss. */
function sharedSession(url: string): { tryLock(name: string): Promise<Held | 'busy' | undefined>; close(): Promise<void> } {
  let closed = false;
  let current: Session | undefined;

  interface Waiting {
    op: Op;
    /** Runs with the answer as soon as the statement returns, before anything else does (the guards below). */
    settle(answer: Answer | undefined, error?: unknown): void;
  }
  interface Session {
    client: Client;
    ready: Promise<void>;
    lost: boolean;
    held: Set<number>;
    waiting: Waiting[];
    busy: boolean;
  }

  /**
   * The steps asked while a statement runs go in the next one, all together (pg 8 warns of a query sent while
   * another runs, and pg 9 drops its queue). A statement that fails fails each of its steps.
   */
  const pump = (s: Session) => {
    if (s.busy || s.waiting.length === 0) return;
    const steps = s.waiting.splice(0);
    s.busy = true;
    const take = steps.map((w) => 'take' in w.op);
    const names = steps.map((w) => ('take' in w.op ? w.op.take : null));
    const hashes = steps.map((w) => ('release' in w.op ? w.op.release : null));
    s.ready
      .then(() => s.client.query<{ h: number; ok: boolean; i: string }>({ name: 'gateway_lock_steps', text: STEPS, values: [take, names, hashes] }))
      .then(
        ({ rows }) => {
          const byStep = new Map(rows.map((r) => [Number(r.i), r]));
          steps.forEach((w, k) => {
            const r = byStep.get(k + 1);
            if (r) w.settle({ h: r.h, ok: r.ok });
            else w.settle(undefined, new Error('lock step without an answer'));
          });
        },
        (e: unknown) => steps.forEach((w) => w.settle(undefined, e)),
      )
      // The settles only count and resolve; nothing of theirs may end the process as an unhandled rejection.
      .catch(() => undefined)
      .finally(() => {
        s.busy = false;
        pump(s);
      });
  };

  const session = (): Session => {
    if (current && !current.lost) return current;
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000, application_name: 'gateway locks' });
    const s: Session = { client, ready: Promise.resolve(), lost: false, held: new Set<number>(), waiting: [], busy: false };
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

  /** Asks for a step on `s`; `settle` runs in the order the statement answered. */
  const step = (s: Session, op: Op, settle: Waiting['settle']) => {
    s.waiting.push({ op, settle });
    pump(s);
  };

  return {
    /**
     * The lock taken on the shared session; 'busy' when another session holds it; undefined when this session
     * cannot tell (it is away, or another name with the same hash holds the grant here).
     */
    tryLock(name) {
      if (closed) return Promise.resolve(undefined);
      const s = session();
      return new Promise((resolve) =>
        step(s, { take: name }, (answer) => {
          // The session is away: the pool's session waits (and reports a server that is gone).
          if (!answer) return resolve(undefined);
          if (!answer.ok) return resolve('busy');
          const hash = answer.h;
          if (s.held.has(hash)) {
            // Another name with the same hash holds it here: the grant was a reentrant one. Give it back and wait elsewhere.
            step(s, { release: hash }, () => undefined);
            return resolve(undefined);
          }
          // Counted as held here at once, before any later step's answer is looked at.
          s.held.add(hash);
          resolve({
            release: () =>
              new Promise<void>((done) => {
                // After a loss, the lock went with the session.
                if (s.lost) return done();
                step(s, { release: hash }, () => {
                  s.held.delete(hash);
                  done();
                });
              }),
          });
        }),
      );
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
