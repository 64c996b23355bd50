import fs from 'node:fs';

/**
 * CPU of the bench's parts, read from /proc once a second (bench/pipeline.ts --costs): the two worker
 * processes, the API process, the PostgreSQL backends serving the gateway's database and those serving
 * Temporal's, the rest of that PostgreSQL cluster, the Temporal server, and the rest of what the bench
 * started (chain nodes, the bench itself). Other processes on the machine are never counted.
 * A backend that exits between two readings loses at most its last second: the pools keep most
 * connections open through a burst.
 */
export const CPU_PARTS = ['workers', 'api', 'pg-gateway', 'pg-temporal', 'pg-other', 'temporal', 'rest'] as const;
export type CpuPart = (typeof CPU_PARTS)[number];

export interface CpuSampler {
  /** CPU used by each part since the sampler started, in core-ms (reads /proc now). */
  read(): Record<CpuPart, number>;
  stop(): void;
}

const TICK_MS = 10; // USER_HZ 100: /proc/<pid>/stat counts in 10 ms ticks

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  ticks: number;
}

function readProcs(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const f = stat.slice(close + 2).split(' ');
      out.set(Number(name), { pid: Number(name), ppid: Number(f[1]), comm: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}

const cmdline = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
};

export function startCpuSampler(o: { workerPids: () => number[]; apiPids: () => number[]; gatewayDb: string; temporalDbs: string[]; intervalMs?: number }): CpuSampler {
  const root = process.pid;
  /** Per PID: its part, its ticks when first seen (0 when born after the start), its latest ticks. */
  const seen = new Map<number, { part: CpuPart; base: number; last: number }>();
  let first = true;
  const scan = () => {
    const procs = readProcs();
    const under = (pid: number, top: Set<number>): boolean => {
      for (let p = pid, hops = 0; p > 1 && hops < 64; p = procs.get(p)?.ppid ?? 0, hops++) if (top.has(p)) return true;
      return false;
    };
    const workers = new Set(o.workerPids());
    const api = new Set(o.apiPids());
    const titles = new Map<number, string>();
    for (const p of procs.values()) if (p.comm === 'postgres') titles.set(p.pid, cmdline(p.pid));
    const postmasters = new Set<number>();
    const dbOf = (title: string) => (title.includes(` ${o.gatewayDb} `) ? 'pg-gateway' : o.temporalDbs.some((d) => title.includes(` ${d} `)) ? 'pg-temporal' : undefined);
    for (const [pid, title] of titles) if (dbOf(title)) postmasters.add(procs.get(pid)!.ppid);
    const benchTree = new Set([root]);
    for (const p of procs.values()) {
      let part: CpuPart | undefined;
      const title = titles.get(p.pid);
      if (title !== undefined && (dbOf(title) || postmasters.has(p.pid) || postmasters.has(p.ppid))) part = (dbOf(title) as CpuPart | undefined) ?? 'pg-other';
      else if (under(p.pid, workers)) part = 'workers';
      else if (under(p.pid, api)) part = 'api';
      else if (under(p.pid, benchTree)) part = p.comm.startsWith('temporal') ? 'temporal' : 'rest';
      if (!part) continue;
      const s = seen.get(p.pid);
      if (s) {
        s.last = p.ticks;
        s.part = part;
      } else seen.set(p.pid, { part, base: first ? p.ticks : 0, last: p.ticks });
    }
    first = false;
  };
  scan();
  const timer = setInterval(scan, o.intervalMs ?? 1000);
  timer.unref();
  return {
    read() {
      scan();
      const out = Object.fromEntries(CPU_PARTS.map((p) => [p, 0])) as Record<CpuPart, number>;
      for (const s of seen.values()) out[s.part] += (s.last - s.base) * TICK_MS;
      return out;
    },
    stop: () => clearInterval(timer),
  };
}
