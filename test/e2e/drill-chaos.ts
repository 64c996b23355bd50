import { Pool } from 'pg';
import type { Supervised } from './drill-procs';

/**
 * Worker kills at activity boundaries: the payments table is watched (read only, to pick moments, never
 * to judge) and when a lifecycle step lands (a deposit recorded, a forward signed and stored, a snapshot
 * written, a delivery done) a worker may be SIGKILLed right then; a fallback timer kills one anyway if
 * nothing happened for a while. One killed worker is restarted quickly, so a worker is always coming back.
 */
export interface ChaosOptions {
  random: () => number;
  /** Chance of a kill at each observed boundary. */
  killProbability: number;
  /** No two kills closer than this; a kill at the latest after `maxGapMs`. */
  minGapMs: number;
  maxGapMs: number;
  /** Restart delay of a killed worker, drawn in [min, max]. */
  restartDelayMs: [number, number];
  log: (line: string) => void;
}

export interface Progress {
  n: number;
  fwd: number;
  snap: number;
  done: number;
  failed: number;
}

export interface Chaos {
  boundaries(): number;
  /** The payments table's last reading: recorded, forward stored, snapshot written, done, failed. */
  progress(): Progress;
  stop(): Promise<void>;
}

export function startChaos(databaseUrl: string, workers: Supervised[], opts: ChaosOptions): Chaos {
  const pool = new Pool({ connectionString: databaseUrl, max: 1, connectionTimeoutMillis: 2000 });
  // The drill's own PostgreSQL restart ends this pool's connection too; that is not the drill's failure.
  pool.on('error', () => undefined);
  let stopped = false;
  let last = '';
  let boundaries = 0;
  let progress: Progress = { n: 0, fwd: 0, snap: 0, done: 0, failed: 0 };
  let lastKill = Date.now();
  const timers = new Set<NodeJS.Timeout>();

  const kill = (why: string) => {
    const ready = workers.filter((w) => w.ready());
    if (ready.length === 0) return;
    const victim = ready[Math.floor(opts.random() * ready.length)];
    lastKill = Date.now();
    victim.kill();
    const [lo, hi] = opts.restartDelayMs;
    const delay = Math.round(lo + opts.random() * (hi - lo));
    opts.log(`chaos: SIGKILL ${victim.name} (${why}); restart in ${delay} ms`);
    const t = setTimeout(() => {
      timers.delete(t);
      if (!stopped) victim.start();
    }, delay);
    timers.add(t);
  };

  const loop = (async () => {
    while (!stopped) {
      await new Promise((r) => setTimeout(r, 250));
      try {
        const { rows } = await pool.query<{ n: string; fwd: string; snap: string; done: string; failed: string }>(
          `SELECT count(*) n, count(forward_raw) fwd, count(snapshot) snap,
                  count(*) FILTER (WHERE result = 'done') done, count(*) FILTER (WHERE result = 'failed') failed FROM payments`,
        );
        const now = JSON.stringify(rows[0]);
        progress = Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)])) as unknown as Progress;
        if (last && now !== last) {
          boundaries++;
          if (Date.now() - lastKill >= opts.minGapMs && opts.random() < opts.killProbability) kill(`boundary ${now}`);
        }
        last = now;
      } catch {
        // the database is restarting
      }
      if (Date.now() - lastKill >= opts.maxGapMs) kill('timer');
    }
  })();

  return {
    boundaries: () => boundaries,
    progress: () => progress,
    async stop() {
      stopped = true;
      await loop;
      for (const t of timers) clearTimeout(t);
      // Everyone comes back for the settling phase.
      for (const w of workers) if (!w.alive()) w.start();
      await pool.end().catch(() => undefined);
    },
  };
}
