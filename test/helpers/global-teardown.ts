import fs from 'node:fs';

/** Stops the throw-away PostgreSQL of global-setup by its PID and removes its files. */
export default async function globalTeardown(): Promise<void> {
  const marker = process.env.GW_TEST_PG_MARKER;
  if (!marker || !fs.existsSync(marker)) return;
  const { pid, dir } = JSON.parse(fs.readFileSync(marker, 'utf8')) as { pid: number; dir: string };
  fs.rmSync(marker);
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  // runuser forwards the signal to postgres; SIGINT is PostgreSQL's "fast shutdown".
  if (alive()) process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 15_000;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (alive()) process.kill(pid, 'SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
}
