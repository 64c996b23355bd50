import fs from 'node:fs';

const HZ = 100; // USER_HZ: /proc/<pid>/stat's clock ticks

/** utime + stime of a process in seconds, every thread (Linux /proc); 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / HZ;
  } catch {
    return 0;
  }
}
