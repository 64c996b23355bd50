/**
 * The gateway following a mainnet-shaped Solana chain, black-box (issue 57): a live surfnet making a block
 * every 400 ms, read by the gateway through a proxy that pads every block to mainnet's size
 * (bench/density/sol-pad-proxy.ts: generated transactions spliced in beside the node's own, said so here
 * because surfnet itself executes far fewer than 3,000 transactions in a slot). The gateway is `npm start`'s
 * process (compiled, PGlite, the Temporal dev server) with SOLANA_RPC_URL on the proxy and the head feed on
 * surfnet's WebSocket. It prints the gateway's CPU while it follows unpadded blocks, then padded ones (its
 * whole process: watcher, worker, API thread, PGlite), the blocks padded, and the time from a real SOL
 * deposit's block to its payment in GET /api/sol/logs.
 *
 *   npx tsx bench/sol-live.ts [--txs 3000] [--follow-s 40] [--postgres] [--v8-defaults] [--backlog-s 60]
 *
 * --postgres: the gateway on a throw-away PostgreSQL (bench/lib/database.ts; DATABASE_URL's server when set)
 * instead of the embedded PGlite, whose statements run on the thread that reads the blocks.
 * --v8-defaults: the gateway's process without npm start's V8 flags (its small semi-spaces and
 * --optimize-for-size), as a deployment that starts dist/src/main.js itself runs it.
 * --backlog-s N: then the proxy holds the head the gateway sees for N seconds while the chain goes on, and
 * lets it go: the gateway's catch-up over that backlog of padded blocks, in blocks a second (from the release
 * to the proxy's answer for the last block of the backlog) and against mainnet's 2.5 (target ≥ 5 times).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Keypair, PublicKey, SystemProgram, Transaction, type Connection } from '@solana/web3.js';
import { freePort } from '../devnet/devserver';
import { startSurfnet } from '../devnet/surfnet';
import { PROJECT_ROOT } from '../src/project-root';
import { startPadProxy, type PadProxy } from './density/sol-pad-proxy';
import { benchServer } from './lib/database';

const { values: flags } = parseArgs({
  options: { txs: { type: 'string', default: '3000' }, 'follow-s': { type: 'string', default: '40' }, postgres: { type: 'boolean', default: false }, 'backlog-s': { type: 'string', default: '0' }, 'v8-defaults': { type: 'boolean', default: false } },
});
const SLOT_MS = 400;
const f = (x: number, d = 1) => x.toFixed(d);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds of a process so far (all its threads), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function cpuShare(pid: number, seconds: number): Promise<number> {
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  return (cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000);
}

async function main(): Promise<void> {
  const build = spawnSync(process.execPath, ['scripts/build.js'], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');
  const dev = await startSurfnet({ slotTimeMs: SLOT_MS });
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-sol-live-'));
  const stops: Array<() => Promise<void> | void> = [() => dev.stop(), () => rmSync(dir, { recursive: true, force: true })];
  try {
    const proxy = await startPadProxy(dev.rpcUrl, Number(flags.txs) - 10, dev.tokens.sol_usdc);
    stops.unshift(() => proxy.stop());
    await proxy.pad(false);
    const port = await freePort('127.0.0.1');
    const env: NodeJS.ProcessEnv = {
      ...process.env, DATA_DIR: dir, PORT: String(port), TEMPORAL_UI_PORT: String(await freePort('127.0.0.1')), DEVNET: 'false',
      SOLANA_RPC_URL: proxy.url, SOLANA_WS_URL: dev.wsUrl, SOLANA_CHAIN: 'regtest', SOL_USDC_CONTRACT: dev.tokens.sol_usdc, LOG_LEVEL: 'warn',
      CALLBACK_ALLOW_PRIVATE: 'true', MALLOC_ARENA_MAX: '2',
    };
    for (const k of Object.keys(env)) if (k.startsWith('npm_') || (/_RPC_URL$|_WS_URL$/.test(k) && !k.startsWith('SOLANA_'))) delete env[k];
    delete env.DATABASE_URL;
    delete env.TEMPORAL_ADDRESS;
    if (flags.postgres) {
      const pg = await benchServer();
      stops.push(() => pg.stop());
      env.DATABASE_URL = await pg.database();
    }
    const v8 = flags['v8-defaults'] ? [] : ['--max-semi-space-size=1', '--optimize-for-size'];
    const gateway = spawn(process.execPath, [...v8, 'dist/src/main.js'], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    gateway.stdout.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-20_000)));
    gateway.stderr.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-20_000)));
    stops.unshift(async () => {
      const gone = new Promise((r) => gateway.once('exit', r));
      gateway.kill('SIGTERM');
      await gone;
    });
    const base = `http://127.0.0.1:${port}/api`;
    const deadline = performance.now() + 180_000;
    while (!(await fetch(`${base}/health`).then((r) => r.ok, () => false))) {
      if (performance.now() > deadline || gateway.exitCode !== null) throw new Error(`gateway not ready:\n${out}`);
      await sleep(250);
    }
    const callbackUrl = 'http://127.0.0.1:9/sol-live';
    const created = await fetch(`${base}/sol/create`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callback_url: callbackUrl, address_out: Keypair.generate().publicKey.toBase58() }),
    });
    const config = (await created.json()) as { address_in?: string };
    if (!config.address_in) throw new Error(`create failed: ${JSON.stringify(config)}`);
    const follow = Number(flags['follow-s']);
    const quiet = await cpuShare(gateway.pid!, Math.min(20, follow));
    const padded0 = await proxy.pad(true);
    const dense = await cpuShare(gateway.pid!, follow);
    const padded = (await proxy.pad(true)) - padded0;
    console.log(
      `solana, live surfnet (one block every ${SLOT_MS} ms) read through the padding proxy, gateway on ${flags.postgres ? 'PostgreSQL' : 'PGlite'}${flags['v8-defaults'] ? ', V8 defaults' : ''}: ${padded} blocks padded to ${flags.txs} transactions in ${follow} s ` +
        `(${f(padded / follow, 2)} a second; mainnet 2.5)`,
    );
    console.log(
      `  gateway process CPU (watcher, worker, API thread${flags.postgres ? '' : ', PGlite'}): ${f(100 * quiet)} % of a core on unpadded blocks, ${f(100 * dense)} % on mainnet-sized ones: ` +
        `the reading of mainnet-sized blocks ${f(100 * (dense - quiet))} % (target ≤ 20 %: ${dense - quiet <= 0.2 ? 'met' : 'NOT met'})`,
    );
    // A real deposit, in a padded block, found in the logs.
    const customer = Keypair.fromSecretKey(Uint8Array.from(dev.customerSecret));
    const { blockhash } = await dev.connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: customer.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: new PublicKey(config.address_in), lamports: 50_000_000n }),
    );
    tx.sign(customer);
    const sentAt = performance.now();
    const txid = await dev.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    let landedAt = 0;
    let inLogsAt = 0;
    let slot = 0;
    const logsUrl = `${base}/sol/logs?callback=${encodeURIComponent(callbackUrl)}`;
    const until = performance.now() + 120_000;
    while (!inLogsAt && performance.now() < until) {
      if (!landedAt) {
        const s = (await dev.connection.getSignatureStatuses([txid])).value[0];
        if (s?.confirmationStatus === 'confirmed' || s?.confirmationStatus === 'finalized') {
          landedAt = performance.now();
          slot = s.slot;
        }
      }
      const logs = (await fetch(logsUrl).then((r) => r.json(), () => null)) as { callbacks?: Array<{ txid_in?: string }> } | null;
      if (logs?.callbacks?.some((c) => c.txid_in === txid)) inLogsAt = performance.now();
      else await sleep(50);
    }
    const behind = await proxy.pad(true);
    console.log(
      `  a SOL deposit (${txid.slice(0, 12)}…) confirmed in slot ${slot || '?'} ${landedAt ? f((landedAt - sentAt) / 1000, 2) : '?'} s after it was sent; ` +
        (inLogsAt ? `in GET /api/sol/logs ${f((inLogsAt - sentAt) / 1000, 2)} s after it was sent, ${landedAt ? f((inLogsAt - landedAt) / 1000, 2) : '?'} s after it was confirmed` : 'NOT in the logs within 120 s') +
        `; ${behind - padded0 - padded} more blocks padded meanwhile; load average ${loadavg().map((x) => f(x, 2)).join(' ')}`,
    );
    if (!inLogsAt) console.log(out.slice(-3000));
    if (Number(flags['backlog-s']) > 0) await catchUp(dev.connection, proxy, gateway.pid!, Number(flags['backlog-s']));
  } finally {
    for (const stop of stops) await stop();
  }
}

/** The gateway held at the chain's head for `seconds` while the chain goes on, then let go: its catch-up. */
async function catchUp(connection: Connection, proxy: PadProxy, pid: number, seconds: number): Promise<void> {
  const held = await connection.getSlot('confirmed');
  await proxy.hold(held);
  await sleep(seconds * 1000);
  const head = await connection.getSlot('confirmed');
  const backlog = (await connection.getBlocks(held + 1, head, 'confirmed')).length;
  const c0 = cpuSeconds(pid);
  const releasedAt = Date.now();
  await proxy.hold(null);
  let doneAt = 0;
  while (!doneAt && Date.now() - releasedAt < Math.max(120_000, 4 * seconds * 1000)) {
    await sleep(100);
    const last = (await proxy.served(releasedAt)).find(([slot]) => slot >= head);
    if (last) doneAt = last[1];
  }
  const cpu = cpuSeconds(pid) - c0;
  if (!doneAt) {
    console.log(`  catch-up: a backlog of ${backlog} blocks (${seconds} s) NOT read within ${Math.max(120, 4 * seconds)} s; load average ${loadavg().map((x) => f(x, 2)).join(' ')}`);
    return;
  }
  const rate = backlog / ((doneAt - releasedAt) / 1000);
  console.log(
    `  catch-up: a backlog of ${backlog} padded blocks (head held ${seconds} s) read in ${f((doneAt - releasedAt) / 1000, 2)} s: ${f(rate, 2)} blocks a second, ` +
      `${f(rate / 2.5, 2)} times mainnet's 2.5 (target ≥ 5: ${rate >= 12.5 ? 'met' : 'NOT met'}); gateway CPU ${f((1000 * cpu) / backlog)} ms a block; ` +
      `load average ${loadavg().map((x) => f(x, 2)).join(' ')}`,
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
