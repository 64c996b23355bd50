import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveTemporalCli } from '../../src/temporal/binaries';
import { startDevServer } from '../../devnet/devserver';
import { descendants, isAlive, waitFor } from '../helpers/process';

/**
 * The embedded Temporal dev server makes no outbound connection: every connect() of its process tree,
 * traced by strace from the first instruction, goes to loopback or a Unix socket. Without the switch the
 * server resolves updates.temporal.io within a second of starting (a connect to the DNS server).
 */
describe('Temporal dev server of npm start', () => {
  it('starts, serves and stops without one connection beyond loopback', async () => {
    const cli = resolveTemporalCli();
    if (!cli) throw new Error('Temporal CLI not found: node scripts/setup-temporal.js installs it');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-devserver-'));
    const trace = path.join(dir, 'connect.trace');
    // The launcher runs `wrapper server start-dev …`; the wrapper runs the real CLI under strace.
    const wrapper = path.join(dir, 'temporal');
    fs.writeFileSync(wrapper, `#!/bin/sh\nexec strace -f -qq -e trace=connect -o '${trace}' '${cli}' "$@"\n`, { mode: 0o755 });
    const server = await startDevServer({ cliPath: wrapper, host: '127.0.0.1', dataDir: path.join(dir, 'data'), namespace: 'default', port: 0, uiPort: 0 });
    // strace detaches from its tracees when it is stopped, and they run on: the traced server is stopped
    // first (strace then exits with it), and whatever is left of the tree after that is killed.
    let traced: number[] = [];
    try {
      // The version check runs when the frontend starts; give it time to try.
      await new Promise((r) => setTimeout(r, 3000));
    } finally {
      traced = descendants(server.pid);
      for (const pid of traced) process.kill(pid, 'SIGTERM');
      await waitFor(() => traced.every((p) => !isAlive(p)), 10_000, 'the traced dev server to stop').catch(() => traced.forEach((p) => isAlive(p) && process.kill(p, 'SIGKILL')));
      await server.stop();
    }
    expect(traced.length).toBeGreaterThan(0);
    expect(traced.filter(isAlive)).toEqual([]);
    const connects = fs.readFileSync(trace, 'utf8').split('\n').filter((l) => /\bconnect\(/.test(l));
    expect(connects.length).toBeGreaterThan(0); // the trace saw the server's own loopback connections
    const outbound = connects.filter((l) => !/AF_UNIX|inet_addr\("127\.|inet_pton\(AF_INET6, "::1"/.test(l));
    expect(outbound).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('a dev server that exits before it answers', () => {
  /** A launcher that fails its first `failFirst` starts (code 2, a line on its log), then runs the real CLI. */
  function flakyCli(dir: string, failFirst: number): { cli: string; starts: () => number } {
    const real = resolveTemporalCli();
    if (!real) throw new Error('Temporal CLI not found: node scripts/setup-temporal.js installs it');
    const count = path.join(dir, 'starts');
    const cli = path.join(dir, 'temporal');
    fs.writeFileSync(
      cli,
      `#!/bin/sh\necho x >> '${count}'\nif [ "$(wc -l < '${count}')" -le ${failFirst} ]; then echo "listen tcp: address already in use (start $(wc -l < '${count}'))"; exit 2; fi\nexec '${real}' "$@"\n`,
      { mode: 0o755 },
    );
    return { cli, starts: () => (fs.existsSync(count) ? fs.readFileSync(count, 'utf8').trim().split('\n').length : 0) };
  }

  it('is started again on fresh ports, and serves', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-devserver-'));
    const { cli, starts } = flakyCli(dir, 1);
    const server = await startDevServer({ cliPath: cli, host: '127.0.0.1', dataDir: path.join(dir, 'data'), namespace: 'default', port: 0, uiPort: 0 });
    try {
      expect(starts()).toBe(2);
      expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    } finally {
      await server.stop();
    }
  }, 90_000);

  it('after three failed starts, fails with the end of its log', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-devserver-'));
    const { cli, starts } = flakyCli(dir, 99);
    await expect(startDevServer({ cliPath: cli, host: '127.0.0.1', dataDir: path.join(dir, 'data'), namespace: 'default', port: 0, uiPort: 0 })).rejects.toThrow(
      /exited with code 2 before it answered; its log ends:[\s\S]*address already in use \(start 3\)/,
    );
    expect(starts()).toBe(3);
  });
});
