/**
 * `npm run devnet -- install`: the local UTXO nodes this machine can run, each by its route, idempotently.
 * - litecoind: Debian's package (apt-get, as root; otherwise the command to run is printed);
 * - Bitcoin: Bitcoin Knots (a Bitcoin Core fork with Core's RPC and wallet) from Debian unstable, unpacked
 *   with its libraries into .tools/nodes/bitcoin-knots; when that route fails, btcd built with Go;
 * - Bitcoin Cash: bchd built with Go from the pinned module in scripts/nodes/bchd.
 * Dogecoin and Zcash have no node here (no registry packages one; zebrad builds for over an hour).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, bitcoinCashNode, bitcoinNode, goNodeBinary, knotsDir, litecoinNode, type NodeCommand } from '../binaries';
import { installDebianRoot } from './debian-root';
import { goBuild, goBuildCurrent } from './go-build';

export type NodeName = 'litecoind' | 'bitcoin' | 'bchd';
export const ALL_NODES: NodeName[] = ['litecoind', 'bitcoin', 'bchd'];

export interface InstallResult {
  node: NodeName;
  /** installed: done now; present: was there already; failed: see `message`. */
  outcome: 'installed' | 'present' | 'failed';
  message: string;
}

/** Depends of bitcoin-knots that are maintainer-script and service machinery, no library of bitcoind's. */
const KNOTS_SKIP = ['debconf', 'debconf-2.0', 'cdebconf', 'systemd', 'systemd-sysusers', 'systemd-standalone-sysusers', 'base-passwd', 'adduser'];
const moduleDir = (name: string) => path.join(PROJECT_ROOT, 'scripts', 'nodes', name);

/** The node's own version line, or undefined when it does not run. */
export function versionOf(cmd: NodeCommand): string | undefined {
  const flag = cmd.family === 'core' ? '-version' : '--version';
  const r = spawnSync(cmd.file, [...cmd.args, flag], { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) return undefined;
  return r.stdout.split('\n').find((l) => l.trim())?.trim();
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

function installLitecoind(log: (l: string) => void): InstallResult {
  const have = litecoinNode();
  if (have && versionOf(have)) return { node: 'litecoind', outcome: 'present', message: `${have.file}: ${versionOf(have)}` };
  if (!isRoot()) return { node: 'litecoind', outcome: 'failed', message: 'litecoind comes from Debian: run as root, or: sudo apt-get install -y litecoind' };
  log('apt-get install litecoind');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', '--no-install-recommends', 'litecoind']]) {
    const r = spawnSync('apt-get', args, { encoding: 'utf8', env });
    if (r.status !== 0) return { node: 'litecoind', outcome: 'failed', message: `apt-get ${args[0]} failed: ${(r.stderr || r.stdout).trim().slice(-500)}` };
  }
  const now = litecoinNode();
  return now ? { node: 'litecoind', outcome: 'installed', message: `${now.file}: ${versionOf(now)}` } : { node: 'litecoind', outcome: 'failed', message: 'apt-get installed no /usr/bin/litecoind' };
}

function installGoNode(name: 'btcd' | 'bchd', pkg: string, log: (l: string) => void): { outcome: 'installed' | 'present'; version: string } {
  const b = { moduleDir: moduleDir(name), pkg, out: goNodeBinary(name), log };
  let outcome: 'installed' | 'present' = 'present';
  if (!goBuildCurrent(b)) {
    goBuild(b);
    outcome = 'installed';
  }
  const version = versionOf({ name, family: 'btcd', file: b.out, args: [] });
  if (!version) throw new Error(`${b.out} was built but does not run`);
  return { outcome, version };
}

function installBitcoin(log: (l: string) => void): InstallResult {
  const have = bitcoinNode();
  const v = have && versionOf(have);
  // A btcd built because Knots could not be had stays until removed (rm .tools/nodes/bin/btcd, then install again).
  if (have && v) return { node: 'bitcoin', outcome: 'present', message: `${have.name}: ${v}` };
  let why = '';
  if (process.platform === 'linux' && process.arch === 'x64') {
    try {
      const version = installDebianRoot({ dir: knotsDir(), suite: 'unstable', pkg: 'bitcoin-knots', skip: KNOTS_SKIP, log });
      const now = bitcoinNode();
      const line = now && versionOf(now);
      if (now?.name === 'bitcoind' && line) return { node: 'bitcoin', outcome: 'installed', message: `Bitcoin Knots ${version} (Debian unstable, in ${knotsDir()}): ${line}` };
      why = 'the unpacked bitcoind does not run';
    } catch (e) {
      why = (e as Error).message;
    }
    fs.rmSync(path.join(knotsDir(), 'root'), { recursive: true, force: true });
  } else {
    why = 'Debian amd64 packages need a Linux x86-64 machine';
  }
  log(`Bitcoin Knots not installed (${why}); building btcd instead`);
  try {
    const built = installGoNode('btcd', 'github.com/btcsuite/btcd', log);
    return { node: 'bitcoin', outcome: built.outcome, message: `btcd (Knots: ${why}): ${built.version}` };
  } catch (e) {
    return { node: 'bitcoin', outcome: 'failed', message: `neither Bitcoin Knots (${why}) nor btcd (${(e as Error).message})` };
  }
}

function installBchd(log: (l: string) => void): InstallResult {
  if (process.env.BCHD_PATH) {
    const have = bitcoinCashNode();
    const v = have && versionOf(have);
    return v ? { node: 'bchd', outcome: 'present', message: `${have.file}: ${v}` } : { node: 'bchd', outcome: 'failed', message: `BCHD_PATH=${process.env.BCHD_PATH} does not run` };
  }
  try {
    const built = installGoNode('bchd', 'github.com/gcash/bchd', log);
    return { node: 'bchd', ...built, message: built.version };
  } catch (e) {
    return { node: 'bchd', outcome: 'failed', message: (e as Error).message };
  }
}

/** Installs the named nodes (all by default), one after another; never throws, reports each. */
export function installNodes(opts: { only?: NodeName[]; log?: (line: string) => void } = {}): InstallResult[] {
  const log = opts.log ?? ((l: string) => console.log(l));
  const out: InstallResult[] = [];
  for (const node of opts.only ?? ALL_NODES) {
    const started = Date.now();
    const r = node === 'litecoind' ? installLitecoind(log) : node === 'bitcoin' ? installBitcoin(log) : installBchd(log);
    log(`${r.node}: ${r.outcome} — ${r.message} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    out.push(r);
  }
  return out;
}
