import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startPgServer } from '../../test/helpers/pg-server';

/**
 * A PostgreSQL server for a benchmark: DATABASE_URL's server when set, else a throw-away cluster of the
 * machine's PostgreSQL (test/helpers/pg-server.ts), stopped by PID at the end.
 */
export interface BenchServer {
  /** The server's URL (its default database), for a tool that makes databases of its own. */
  url: string;
  /** A new, empty database on the server; dropped by stop(). */
  database(): Promise<string>;
  /** A database name of this run, for another tool to make (the Temporal server's); dropped by stop(). */
  reserve(prefix: string): string;
  stop(): Promise<void>;
}

export async function benchServer(): Promise<BenchServer> {
  const shared = process.env.DATABASE_URL;
  const pg = shared ? undefined : await startPgServer();
  const serverUrl = shared ?? pg!.url;
  const made: string[] = [];
  const admin = async <T>(fn: (c: Client) => Promise<T>): Promise<T> => {
    const c = new Client({ connectionString: serverUrl });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  return {
    url: serverUrl,
    reserve(prefix) {
      const name = `${prefix}_${randomBytes(5).toString('hex')}`;
      made.push(name);
      return name;
    },
    async database() {
      const name = `gw_bench_${randomBytes(5).toString('hex')}`;
      await admin((c) => c.query(`CREATE DATABASE ${name}`));
      made.push(name);
      const u = new URL(serverUrl);
      u.pathname = `/${name}`;
      return u.toString();
    },
    async stop() {
      // pg's Pool.end() resolves before its connections have closed: wait for them (bounded), so that the
      // server's shutdown or the drop does not cut sessions that are already on their way out.
      await admin(async (c) => {
        const end = Date.now() + 5000;
        while (Date.now() < end) {
          const { rows } = await c.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = ANY($1)', [made]);
          if (Number(rows[0].n) === 0) return;
          await new Promise((r) => setTimeout(r, 50));
        }
      });
      if (shared) await admin(async (c) => { for (const name of made) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); });
      await pg?.stop();
    },
  };
}
