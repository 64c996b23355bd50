import fs from 'node:fs';
import path from 'node:path';

/** Stops the throw-away PostgreSQL of global-setup by its PID and removes its files. */
export default async function globalTeardown(): Promise<void> {
  const marker = process.env.GW_TEST_PG_MARKER;
  if (!marker || !fs.existsSync(marker)) return;
  const { pid, dir } = JSON.parse(fs.readFileSync(marker, 'utf8')) as { pid: number; dir: string };
  fs.rmSync(marker);
  const alive = (p: number) => {
    try {
      process.kill(p, 0);
      return true;
    } catch {
      return false;
    }
  };
  // runuser does not pass signals on: the postmaster itself (its PID is the first line of postmaster.pid)
  // gets SIGINT, PostgreSQL's fast shutdown; then the wrapper.
  const pidFile = path.join(dir, 'data', 'postmaster.pid');
  const postmaster = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]) : undefined;
  for (const p of [postmaster, pid]) {
    if (!p || !alive(p)) continue;
    process.kill(p, 'SIGINT');
    const deadline = Date.now() + 15_000;
    while (alive(p) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (alive(p)) process.kill(p, 'SIGKILL');
  }
  fs.rmSync(dir, { recursive: true, force: true });
}
