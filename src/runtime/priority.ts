import fs from 'node:fs';
import os from 'node:os';

/**
 * Lowers this process's CPU priority to `nice` (1 to 19; 0 leaves it): every thread it has now and, as a new
 * thread takes the value of the thread that starts it, every thread it starts later (the Temporal SDK's
 * workflow threads and core runtime, the libuv pool). Linux keeps the value per thread (/proc/self/task);
 * elsewhere the process's own is set. A thread already at that nice value or above is left as it is.
 */
export function lowerPriority(nice: number): void {
  if (nice <= 0) return;
  let threads = [0];
  try {
    threads = fs.readdirSync('/proc/self/task').map(Number);
  } catch {
    // No /proc: the process as a whole.
  }
  for (const tid of threads) {
    try {
      if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
    } catch {
      // A thread that ended meanwhile.
    }
  }
}
