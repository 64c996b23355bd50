import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { resolveTemporalCli } from '../../src/temporal/binaries';
import { freePort, startDevServer, type DevServer } from '../../devnet/devserver';
import { createTestDatabase } from '../helpers/db';
import { killAndWait, waitFor } from '../helpers/process';

/**
 * What the Dockerfile does, without Docker: `npm run build`, the workflow bundle made at build time,
 * migrations beside dist/src/db, then the image's two entry commands (`node dist/src/entry/api.js`,
 * `node dist/src/entry/worker.js`) against one PostgreSQL and one Temporal dev server.
 */
const root = path.resolve(__dirname, '../..');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-image-'));
const dist = path.join(out, 'dist');
const children: ChildProcess[] = [];
let temporal: DevServer;
let database: Awaited<ReturnType<typeof createTestDatabase>>;

beforeAll(async () => {
  // The image's layout: /app/node_modules beside /app/dist.
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(out, 'node_modules'), 'dir');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--outDir', dist], { cwd: root, stdio: 'pipe' });
  execFileSync(process.execPath, [path.join(dist, 'scripts/bundle-workflows.js'), path.join(dist, 'workflow-bundle.js')], { cwd: root, stdio: 'pipe' });
  fs.cpSync(path.join(root, 'drizzle'), path.join(dist, 'drizzle'), { recursive: true });
  // The entry points must not need the devnet tooling (npm start's embedded default alone loads it).
  fs.rmSync(path.join(dist, 'devnet'), { recursive: true });
  [temporal, database] = await Promise.all([
    startDevServer({ cliPath: resolveTemporalCli()!, host: '127.0.0.1', dataDir: path.join(out, 'temporal'), namespace: 'default', port: 0, uiPort: 0 }),
    createTestDatabase(),
  ]);
}, 240_000);

afterAll(async () => {
  await killAndWait(children);
  await temporal?.stop();
  await database?.drop();
  fs.rmSync(out, { recursive: true, force: true });
}, 60_000);

function run(entry: string, env: Record<string, string>): ChildProcess & { out: () => string } {
  const child = spawn(process.execPath, [path.join(dist, `src/entry/${entry}.js`)], {
    cwd: out,
    env: { PATH: process.env.PATH, DATABASE_URL: database.url, TEMPORAL_ADDRESS: temporal.address, DATA_DIR: path.join(out, 'data'), TEMPORAL_TASK_QUEUE: 'image-test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  children.push(child);
  return Object.assign(child, { out: () => text });
}

it('the built API and worker entry points serve, run workflows from the prebuilt bundle, and stop on SIGTERM', async () => {
  const port = await freePort('127.0.0.1');
  const metrics = await freePort('127.0.0.1');
  const api = run('api', { PORT: String(port), METRICS_PORT: String(metrics) });
  const worker = run('worker', {});
  await waitFor(() => api.out().includes('API ready'), 60_000, 'API ready');
  await waitFor(() => worker.out().includes('worker ready'), 60_000, 'worker ready');
  expect(await (await fetch(`http://127.0.0.1:${port}/api/health`)).json()).toEqual({ status: 'ok' });
  expect(await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text()).toContain('gateway_http_requests_total');
  // No webpack at run time: the worker loaded dist/workflow-bundle.js, made with the sandbox's preload, and
  // gave the SDK no bundler options beside it (the SDK would warn that it ignores them).
  expect(worker.out()).not.toContain('webpack');
  expect(worker.out()).not.toContain('bundlerOptions');
  expect(fs.readFileSync(path.join(dist, 'workflow-bundle.js'), 'utf8')).toContain('Error.stackTraceLimit = 3');

  const connection = await Connection.connect({ address: temporal.address });
  try {
    const client = new Client({ connection });
    const result = await client.workflow.execute('systemCheck', { taskQueue: 'image-test', workflowId: `image-check-${Date.now()}`, workflowExecutionTimeout: '60 seconds' });
    expect((result as { databaseTime: string }).databaseTime).toMatch(/^\d{4}-/);
  } finally {
    await connection.close();
  }

  for (const c of [api, worker]) {
    const t0 = Date.now();
    c.kill('SIGTERM');
    await waitFor(() => c.exitCode !== null || c.signalCode !== null, 10_000, 'exit after SIGTERM');
    expect(c.exitCode).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
  }
}, 240_000);

it('the built API derives its stock of addresses on the derivation thread (dist/src/entry/derive-thread.js)', () => {
  const script = `
    const { threadDeriver } = require('./dist/src/addresses/derive-thread');
    const { xpubDeriver } = require('./dist/src/addresses/derived-addresses');
    const { exportPublicKeys } = require('./dist/src/addresses/watch-only');
    const { HdSeed } = require('./dist/src/chains/keys');
    const keys = exportPublicKeys(HdSeed.fromMnemonic(require('bip39').generateMnemonic(256)));
    const inline = xpubDeriver(keys, 'ethereum', 'mainnet');
    let onThread = true;
    threadDeriver(keys.xpubs.ethereum, 'ethereum', 'mainnet', (i) => { onThread = false; return inline(i); })(5n, 3).then((run) => {
      process.stdout.write(JSON.stringify({ same: run.join() === [5n, 6n, 7n].map(inline).join(), onThread }));
    });`;
  const out1 = execFileSync(process.execPath, ['-e', script], { cwd: out, env: { PATH: process.env.PATH }, stdio: 'pipe' }).toString();
  expect(JSON.parse(out1)).toEqual({ same: true, onThread: true });
});

it('the built entry points refuse to start without PostgreSQL and Temporal named', () => {
  let message = '';
  try {
    execFileSync(process.execPath, [path.join(dist, 'src/entry/worker.js')], { cwd: out, env: { PATH: process.env.PATH }, stdio: 'pipe' });
  } catch (e) {
    message = String((e as { stderr: Buffer }).stderr);
    expect((e as { status: number }).status).toBe(2);
  }
  expect(message.trim()).toBe('invalid configuration: DATABASE_URL must be set for the worker process (npm start runs the embedded default instead)');
});
