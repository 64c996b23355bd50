/**
 * A Debian package from a suite the machine does not run (Bitcoin Knots is in unstable only), fetched with
 * a private apt configuration (its own sources list, state and cache under `dir/apt`) and unpacked with its
 * shared-library closure into `dir/root`; nothing is installed into the system and the system's apt state
 * is not touched. The binaries run with the unpacked suite's own loader and libraries (`loaderCommand`).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface DebianRootOptions {
  dir: string;
  suite: string;
  /** The package whose binaries are wanted; its Depends closure comes along. */
  pkg: string;
  /** Depends that are no shared library (maintainer-script and service machinery): never fetched. */
  skip: string[];
  log?: (line: string) => void;
}

const LIB = 'usr/lib/x86_64-linux-gnu';
const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';
const MIRROR = 'http://deb.debian.org/debian';

function run(cmd: string, args: string[], cwd?: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.filter((a) => !a.startsWith('-o')).slice(-3).join(' ')} failed (${r.status}): ${(r.stderr || r.stdout).trim().slice(-800)}`);
  return r.stdout;
}

/** apt options that confine apt-get and apt-cache to `aptDir`. */
function aptOptions(aptDir: string): string[] {
  const o = (k: string, v: string) => ['-o', `${k}=${v}`];
  return [
    ...o('Dir::Etc::SourceList', path.join(aptDir, 'sources.list')),
    ...o('Dir::Etc::SourceParts', path.join(aptDir, 'sources.list.d')),
    ...o('Dir::Etc::Preferences', path.join(aptDir, 'preferences')),
    ...o('Dir::Etc::PreferencesParts', path.join(aptDir, 'preferences.d')),
    ...o('Dir::State', path.join(aptDir, 'state')),
    ...o('Dir::State::status', path.join(aptDir, 'state', 'status')),
    ...o('Dir::Cache', path.join(aptDir, 'cache')),
    ...o('APT::Architecture', 'amd64'),
    ...o('APT::Sandbox::User', 'root'),
    ...o('Debug::NoLocking', 'true'),
  ];
}

/** First alternative of every Depends/Pre-Depends entry of a `apt-cache show` record. */
export function dependsOf(record: string): string[] {
  const out: string[] = [];
  for (const line of record.split('\n')) {
    const m = /^(?:Pre-)?Depends:\s*(.*)$/.exec(line);
    if (!m) continue;
    for (const entry of m[1].split(',')) {
      const name = entry.split('|')[0].trim().split(/[\s(:]/)[0];
      if (name) out.push(name);
    }
  }
  return out;
}

/** Runs the unpacked binary `bin` (relative to the root) with the root's loader and libraries. */
export function loaderCommand(root: string, bin: string): { file: string; args: string[] } {
  const lib = path.join(root, LIB);
  return { file: path.join(lib, 'ld-linux-x86-64.so.2'), args: ['--library-path', lib, path.join(root, bin)] };
}

/**
 * Fetches `pkg` and its library closure from `suite` and unpacks them into `dir/root`; returns the package
 * version. The .deb files are kept in `dir/debs` (the download of the last run only).
 */
export function installDebianRoot(opts: DebianRootOptions): string {
  const log = opts.log ?? (() => undefined);
  const aptDir = path.join(opts.dir, 'apt');
  for (const d of ['sources.list.d', 'preferences.d', 'state/lists/partial', 'cache/archives/partial']) {
    fs.mkdirSync(path.join(aptDir, d), { recursive: true });
  }
  fs.writeFileSync(path.join(aptDir, 'sources.list'), `deb [signed-by=${KEYRING}] ${MIRROR} ${opts.suite} main\n`);
  fs.writeFileSync(path.join(aptDir, 'state', 'status'), '');
  const apt = aptOptions(aptDir);
  log(`apt-get update (Debian ${opts.suite}, private state in ${aptDir})`);
  run('apt-get', [...apt, '-qq', 'update']);

  // The Depends closure, one apt-cache call per level (each call loads the whole package cache).
  const skip = new Set(opts.skip);
  const seen = new Map<string, string>();
  let level = [opts.pkg];
  while (level.length > 0) {
    const records = run('apt-cache', [...apt, 'show', '--no-all-versions', ...level]).split(/\n\n+/).filter((r) => r.trim());
    const next = new Set<string>();
    for (const record of records) {
      const name = /^Package:\s*(\S+)/m.exec(record)?.[1];
      const version = /^Version:\s*(\S+)/m.exec(record)?.[1];
      if (!name || !version || seen.has(name)) continue;
      seen.set(name, version);
      for (const d of dependsOf(record)) if (!skip.has(d)) next.add(d);
    }
    const missing = level.filter((p) => !seen.has(p));
    if (missing.length > 0) throw new Error(`Debian ${opts.suite} has no package ${missing.join(', ')}`);
    level = [...next].filter((p) => !seen.has(p));
  }
  const debs = path.join(opts.dir, 'debs');
  fs.rmSync(debs, { recursive: true, force: true });
  fs.mkdirSync(debs, { recursive: true });
  const wanted = [...seen].map(([p, v]) => `${p}=${v}`);
  log(`downloading ${wanted.length} packages: ${[...seen.keys()].join(' ')}`);
  run('apt-get', [...apt, '-qq', 'download', ...wanted], debs);

  const root = path.join(opts.dir, 'root');
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  const files = fs.readdirSync(debs).filter((f) => f.endsWith('.deb'));
  for (const [p, v] of seen) {
    // apt-get download names a file NAME_VERSION_ARCH.deb with the epoch's colon as %3a; names have no '_'.
    const file = files.find((f) => f.startsWith(`${p}_`));
    if (!file) throw new Error(`the download of ${p} ${v} is missing`);
    run('dpkg-deb', ['-x', path.join(debs, file), root]);
  }
  return seen.get(opts.pkg)!;
}
