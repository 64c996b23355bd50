/**
 * A Go node (bchd, btcd) built from the Go module proxy through a pinned wrapper module in the repo
 * (scripts/nodes/NAME: go.mod requires the node at a fixed version, go.sum pins every module's hash), so
 * the build needs no version listing and no checksum database, and every machine builds the same sources.
 * Go's own module and build caches (GOMODCACHE, GOCACHE) are left where Go keeps them, outside the clone:
 * a second build on the same machine, even from a fresh clone, only links.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface GoBuild {
  /** The wrapper module's folder (go.mod, go.sum, tools.go). */
  moduleDir: string;
  /** The main package to build, e.g. github.com/gcash/bchd. */
  pkg: string;
  out: string;
  log?: (line: string) => void;
}

/** The go command: on PATH, else the usual /usr/local/go. */
export function goCommand(): string | undefined {
  for (const d of (process.env.PATH ?? '').split(path.delimiter)) {
    if (d && fs.existsSync(path.join(d, 'go'))) return path.join(d, 'go');
  }
  return fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined;
}

/** What the binary was built from: a hash of the wrapper's go.mod and go.sum. */
export function pinOf(moduleDir: string): string {
  const h = createHash('sha256');
  for (const f of ['go.mod', 'go.sum']) h.update(fs.readFileSync(path.join(moduleDir, f)));
  return h.digest('hex').slice(0, 16);
}

const stamp = (out: string) => `${out}.pin`;

/** Whether `out` exists and was built from the wrapper as it is now. */
export function goBuildCurrent(b: Pick<GoBuild, 'moduleDir' | 'out'>): boolean {
  return fs.existsSync(b.out) && fs.existsSync(stamp(b.out)) && fs.readFileSync(stamp(b.out), 'utf8').trim() === pinOf(b.moduleDir);
}

export function goBuild(b: GoBuild): void {
  const go = goCommand();
  if (!go) throw new Error('no go command: install Go (the Go toolchain of this machine, or apt-get install -y golang-go if it is recent enough)');
  fs.mkdirSync(path.dirname(b.out), { recursive: true });
  b.log?.(`go build ${b.pkg} (pinned in ${path.relative(process.cwd(), b.moduleDir) || b.moduleDir}) → ${b.out}`);
  const tmp = `${b.out}.tmp-${process.pid}`;
  const r = spawnSync(go, ['build', '-trimpath', '-o', tmp, b.pkg], {
    cwd: b.moduleDir,
    encoding: 'utf8',
    // The toolchain of this machine only (no toolchain download); modules through the proxy, verified by go.sum.
    env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly', CGO_ENABLED: '0' },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) {
    fs.rmSync(tmp, { force: true });
    throw new Error(`go build ${b.pkg} failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout || String(r.error)).trim().slice(-1500)}`);
  }
  fs.renameSync(tmp, b.out);
  fs.writeFileSync(stamp(b.out), `${pinOf(b.moduleDir)}\n`);
}
