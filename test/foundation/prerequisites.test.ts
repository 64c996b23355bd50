import { spawnSync } from 'node:child_process';
import path from 'node:path';

/** `npm test` on a machine that lacks a part stops at once with one line naming it and its install command. */
const root = path.resolve(__dirname, '../..');
const run = (env: NodeJS.ProcessEnv) =>
  spawnSync(process.execPath, [path.join(root, 'scripts/test-prerequisites.js')], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });

it('passes silently on this machine (everything installed)', () => {
  const r = run({});
  expect([r.status, r.stderr]).toEqual([0, '']);
});

it('without litecoind: exit 1 at once, one line naming it and the command that installs it', () => {
  const t0 = Date.now();
  const r = run({ LITECOIND_PATH: '/nonexistent/litecoind' });
  expect(r.status).toBe(1);
  expect(r.stderr.trim().split('\n')).toEqual(['npm test needs litecoind (the UTXO live-node tests): apt-get install -y litecoind']);
  expect(Date.now() - t0).toBeLessThan(10_000);
});

it('without PostgreSQL (no DATABASE_URL and no initdb on PATH or in /usr/lib/postgresql): names it too', () => {
  const r = run({ DATABASE_URL: '', LITECOIND_PATH: '/nonexistent/litecoind', PATH: path.dirname(process.execPath) });
  expect(r.status).toBe(1);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^npm test needs .*: .*apt-get install -y/);
  expect(lines[0]).toContain('apt-get install -y litecoind');
});

it.each([
  ['BCHD_PATH', '/nonexistent/bchd', 'npm test needs bchd (the bch live-node tests): npm run devnet -- install'],
  ['BITCOIND_PATH', '/nonexistent/bitcoind', 'npm test needs a local Bitcoin node, Bitcoin Knots or btcd (the btc live-node tests): npm run devnet -- install'],
])('with %s naming a missing node: exit 1 at once, one line naming it and `npm run devnet -- install`', (name, value, line) => {
  const t0 = Date.now();
  const r = run({ [name]: value });
  expect(r.status).toBe(1);
  expect(r.stderr.trim().split('\n')).toEqual([line]);
  expect(r.stdout).not.toContain('installs the local nodes');
  expect(Date.now() - t0).toBeLessThan(10_000);
});
