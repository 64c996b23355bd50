#!/usr/bin/env node
// Makes sure the production Temporal server (the version in ops/temporal/VERSION, the one docker-compose.yml
// runs) and its SQL schema tool are on this machine, for the production-topology tests. Temporal publishes
// the server as container images and GitHub release archives only, neither reachable from here, so it is
// built from the Go module (go.temporal.io/server) with `go install`: about 20 minutes and 4-5 GB of Go caches
// from nothing on 2 busy cores. The binaries go to the git-ignored .tools/temporal-server/bin. The Go module and
// build caches and a copy of the binaries per version stay in the user's cache folder
// (TEMPORAL_SERVER_CACHE, default ~/.cache/crypto-gateway-temporal-server), outside the clone, so that a
// fresh clone on a kept machine (CI's) copies the binaries in a second instead of building them again.
// TEMPORAL_SERVER_PATH and TEMPORAL_SQL_TOOL_PATH name existing binaries instead (they must be that version).
//
//   node scripts/setup-temporal-server.js               installs the binaries, building them if need be (waits)
//   node scripts/setup-temporal-server.js --background  starts that build in the background and returns at once
//
// One build per machine at a time: a lock file in the cache folder names the building process; a second
// caller waits for it (or, with --background, leaves it alone) and then copies what it built. npm test's
// pretest starts the build in the background, so that the test files that do not need the server run
// meanwhile; test/helpers/temporal-server.ts waits for it, and test/helpers/sequencer.js runs those files last.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { exe } = require('./executables');
const { spawn, spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const VERSION = fs.readFileSync(path.join(root, 'ops/temporal/VERSION'), 'utf8').trim();
const bin = path.join(root, '.tools/temporal-server/bin');
const cache = process.env.TEMPORAL_SERVER_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'crypto-gateway-temporal-server');
const cachedBin = path.join(cache, `v${VERSION}`);
const SERVER = path.join(bin, 'temporal-server');
const SQL_TOOL = path.join(bin, 'temporal-sql-tool');
const MODULE = 'go.temporal.io/server';

const LOCK = path.join(cache, `build-v${VERSION}.lock`);
const BUILD_LOG = path.join(cache, `build-v${VERSION}.log`);

const log = (msg) => process.stderr.write(`[setup-temporal-server] ${msg}\n`);

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** The pid of another process building this version now, if any (a lock left by a dead process is removed). */
function builder() {
  let pid;
  try {
    pid = Number(fs.readFileSync(LOCK, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (pid === process.pid) return undefined;
  try {
    if (pid > 0) {
      process.kill(pid, 0);
      return pid;
    }
  } catch {
    // no such process
  }
  fs.rmSync(LOCK, { force: true });
  return undefined;
}

/** Takes the build lock; false if another live process holds it. */
function lock() {
  fs.mkdirSync(cache, { recursive: true });
  for (let i = 0; i < 2; i++) {
    // The lock may already name this process: --background writes it for the process it starts.
    if (fs.existsSync(LOCK) && fs.readFileSync(LOCK, 'utf8').trim() === String(process.pid)) return true;
    try {
      fs.writeFileSync(LOCK, String(process.pid), { flag: 'wx' });
      return true;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      if (builder() !== undefined) return false;
    }
  }
  return false;
}

/** Waits while another process builds this version (at most an hour). */
function waitForBuilder() {
  const pid = builder();
  if (pid === undefined) return;
  log(`waiting for the build of Temporal server ${VERSION} by process ${pid} (its log: ${BUILD_LOG})`);
  const end = Date.now() + 60 * 60 * 1000;
  while (builder() !== undefined) {
    if (Date.now() > end) throw new Error(`the build by process ${pid} did not end within an hour (its log: ${BUILD_LOG})`);
    sleep(2000);
  }
}

/** The version a built server reports (`temporal-server --version`: "temporal version 1.32.1"). */
function versionOf(server) {
  const r = spawnSync(server, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return /(\d+\.\d+\.\d+)/.exec(`${r.stdout}${r.stderr}`)?.[1];
}

function goBinary() {
  for (const d of (process.env.PATH || '').split(path.delimiter)) if (d && exe(path.join(d, 'go'))) return path.join(d, 'go');
  return exe('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined;
}

function build() {
  const go = goBinary();
  if (!go) return 'no go toolchain (the Go callback verifier needs one too: apt-get install -y golang-go, or Go from go.dev)';
  fs.mkdirSync(cachedBin, { recursive: true });
  log(`building Temporal server ${VERSION} and its SQL tool with ${go} (about 20 minutes from nothing on 2 cores; Go caches in ${cache})`);
  const t = Date.now();
  const env = {
    ...process.env,
    GOBIN: cachedBin,
    GOMODCACHE: path.join(cache, 'gomodcache'),
    GOCACHE: path.join(cache, 'gocache'),
    // The module names the Go it needs; another toolchain would be a download from outside the registries.
    GOTOOLCHAIN: 'local',
    // Writable module cache, so that the cache folder can simply be deleted; no VCS stamping (the module zip has no .git).
    GOFLAGS: '-modcacherw -buildvcs=false',
  };
  // At low priority: the machine's other work (tests of other checkouts) keeps its share of the CPU.
  const args = ['install', `${MODULE}/cmd/server@v${VERSION}`, `${MODULE}/cmd/tools/sql@v${VERSION}`];
  const nice = ['/usr/bin/nice', '/bin/nice'].find(exe);
  const r = spawnSync(nice ?? go, nice ? ['-n', '10', go, ...args] : args, {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 60 * 60 * 1000,
  });
  if (r.status !== 0) return `go install failed (${r.error ? r.error.message : `exit ${r.status}`}); Temporal ${VERSION} needs the Go its go.mod names`;
  fs.renameSync(path.join(cachedBin, 'server'), path.join(cachedBin, 'temporal-server'));
  fs.renameSync(path.join(cachedBin, 'sql'), path.join(cachedBin, 'temporal-sql-tool'));
  log(`built in ${Math.round((Date.now() - t) / 1000)} s`);
  return undefined;
}

/** The cached binaries of this version into .tools (a copy: the clone may be on another file system). */
function install() {
  const from = (name) => path.join(cachedBin, name);
  if (!(exe(from('temporal-server')) && exe(from('temporal-sql-tool')) && versionOf(from('temporal-server')) === VERSION)) return false;
  fs.mkdirSync(bin, { recursive: true });
  for (const [name, to] of [['temporal-server', SERVER], ['temporal-sql-tool', SQL_TOOL]]) {
    fs.copyFileSync(from(name), `${to}.tmp`);
    fs.chmodSync(`${to}.tmp`, 0o755);
    fs.renameSync(`${to}.tmp`, to);
  }
  return true;
}

/** Whether the binaries named by the environment or in .tools are this version (nothing to do). */
function ready() {
  const server = process.env.TEMPORAL_SERVER_PATH || SERVER;
  const sqlTool = process.env.TEMPORAL_SQL_TOOL_PATH || SQL_TOOL;
  return exe(server) && exe(sqlTool) && versionOf(server) === VERSION ? { server, sqlTool } : undefined;
}

/** Paths of the server and SQL tool, building them when missing or of another version; throws with the reason. */
function ensureTemporalServer() {
  const found = ready();
  if (found) return { ...found, version: VERSION, changed: false };
  if (process.env.TEMPORAL_SERVER_PATH) throw new Error(`TEMPORAL_SERVER_PATH ${process.env.TEMPORAL_SERVER_PATH} is not Temporal server ${VERSION} (or TEMPORAL_SQL_TOOL_PATH is missing)`);
  waitForBuilder();
  if (!install()) {
    if (!lock()) {
      waitForBuilder();
      if (!install()) throw new Error(`another process's build left no Temporal server ${VERSION} in ${cachedBin} (its log: ${BUILD_LOG})`);
    } else {
      try {
        const failed = build();
        if (failed) throw new Error(failed);
      } finally {
        fs.rmSync(LOCK, { force: true });
      }
      if (!install()) throw new Error(`the build left no Temporal server ${VERSION} in ${cachedBin}`);
    }
  }
  const got = versionOf(SERVER);
  if (got !== VERSION) throw new Error(`built a server that reports version ${got}, expected ${VERSION}`);
  return { server: SERVER, sqlTool: SQL_TOOL, version: VERSION, changed: true };
}

/**
 * Starts the build in a detached process unless the binaries are there or being built, and returns at once:
 * 'ready' (installed now), 'building' (started here or by another process; its log: BUILD_LOG), or the
 * reason it cannot (no Go).
 */
function startInBackground() {
  if (ready() || install()) return 'ready';
  if (process.env.TEMPORAL_SERVER_PATH) return `TEMPORAL_SERVER_PATH ${process.env.TEMPORAL_SERVER_PATH} is not Temporal server ${VERSION}`;
  if (builder() !== undefined) return 'building';
  if (!goBinary()) return 'no go toolchain (apt-get install -y golang-go, or Go from go.dev)';
  fs.mkdirSync(cache, { recursive: true });
  const out = fs.openSync(BUILD_LOG, 'w');
  const child = spawn(process.execPath, [__filename], { detached: true, stdio: ['ignore', out, out] });
  child.unref();
  fs.closeSync(out);
  // The lock names the builder from now on, so that a caller right after this one waits for it.
  try {
    fs.writeFileSync(LOCK, String(child.pid), { flag: 'wx' });
  } catch {
    // another process took it in between: the child will wait for that build and copy its result
  }
  log(`building Temporal server ${VERSION} in the background (process ${child.pid}, about 20 minutes from nothing; log: ${BUILD_LOG})`);
  return 'building';
}

module.exports = { VERSION, SERVER, SQL_TOOL, BUILD_LOG, ensureTemporalServer, startInBackground };

if (require.main === module) {
  if (process.argv.includes('--background')) {
    const state = startInBackground();
    if (state !== 'ready' && state !== 'building') {
      log(state);
      process.exit(1);
    }
    process.exit(0);
  }
  try {
    // Silent when everything was there already (npm test's pretest says nothing on a ready machine).
    const { server, changed } = ensureTemporalServer();
    if (changed) log(`Temporal server ${VERSION}: ${path.relative(root, server)}`);
  } catch (e) {
    log(String(e.message || e));
    process.exit(1);
  }
}
