import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Wallet } from 'ethers';
import { freePort } from '../../devnet/devserver';
import { descendants, isAlive, waitFor } from '../helpers/process';

const root = path.resolve(__dirname, '../..');

/**
 * `npm start`'s embedded default as a newcomer runs it: no DATABASE_URL (PGlite), no TEMPORAL_ADDRESS
 * (the CLI dev server as a child). This is also the PGlite smoke test.
 */
describe('npm start (embedded default)', () => {
  let child: ChildProcess | undefined;
  let dataDir: string;
  afterAll(() => {
    if (child?.pid && isAlive(child.pid)) child.kill('SIGKILL');
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers health, then SIGTERM stops every descendant within 10 s', async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-start-'));
    const port = await freePort('127.0.0.1');
    const metricsPort = await freePort('127.0.0.1');
    const env: NodeJS.ProcessEnv = {
      ...process.env, DATA_DIR: dataDir, PORT: String(port), TEMPORAL_UI_PORT: String(await freePort('127.0.0.1')), METRICS_PORT: String(metricsPort),
    };
    delete env.DATABASE_URL;
    delete env.TEMPORAL_ADDRESS;
    // `npm start` itself: its prestart (the Temporal binaries, scripts/build.js), then the compiled gateway.
    for (const k of Object.keys(env)) if (k.startsWith('npm_')) delete env[k];
    child = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await waitFor(() => out.includes('gateway ready') || child!.exitCode !== null, 200_000, 'gateway ready');
    expect(out).toContain('gateway ready');
    expect(out).toMatch(/Temporal UI: http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toContain(`API: http://127.0.0.1:${port}/api`);

    const health = await fetch(`http://127.0.0.1:${port}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });

    // The API runs in its own thread; its statements reach the main thread's PGlite, and its HTTP metrics
    // reach the process's /metrics.
    const created = await fetch(`http://127.0.0.1:${port}/api/eth/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callback_url: 'https://shop.example/start', address_out: Wallet.createRandom().address }),
    });
    expect(created.status).toBe(200);
    expect(await created.json()).toMatchObject({ status: 'success', address_in: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) });
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toContain('gateway_http_requests_total{method="GET",route="/api/health",status="200"} 1');
    expect(metrics).toContain('gateway_http_requests_total{method="POST",route="/api/:ticker/create",status="200"} 1');

    const tree = [child.pid!, ...descendants(child.pid!)];
    expect(tree.length).toBeGreaterThanOrEqual(2); // at least the gateway and the Temporal dev server
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    const t0 = Date.now();
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000))]);
    expect(code).not.toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(10_000);
    // npm passes the signal on and may exit before its script has: every process of the tree is gone by the
    // same bound, counted from the signal.
    await waitFor(() => tree.every((p) => !isAlive(p)), 12_000 - (Date.now() - t0), 'no descendant alive');
    expect(tree.filter(isAlive)).toEqual([]);
    // Nothing secret and no stack trace in what it printed.
    expect(out).not.toMatch(/BEGIN .*PRIVATE KEY|mnemonic/i);
  }, 240_000);
});
