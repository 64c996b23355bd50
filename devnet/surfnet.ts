import {
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, type TransactionInstruction } from '@solana/web3.js';

import { spawn } from 'node:child_process';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { dieWithParent, startOnFreshPorts } from './process';
import { PROJECT_ROOT } from '../src/project-root';

interface SurfnetHandle {
  /** The surfnet's own process; none when it runs on a thread of this one. */
  pid?: number;
  rpcUrl: string;
  wsUrl: string;
  stop(): Promise<void>;
}

export interface SurfnetDevnet {
  /** The surfnet's own process (surfnet-child.cjs); none when it runs on a thread of this one (`inThread`). */
  pid?: number;
  rpcUrl: string;
  wsUrl: string;
  /** Funded customer key (JSON array of the 64 secret-key bytes), generated at start. */
  customerSecret: number[];
  /** ticker → test SPL mint (6 decimals), supply held by the customer's token account. */
  tokens: Record<string, string>;
  connection: Connection;
  stop(): Promise<void>;
}

/** Sends a signed transaction and polls its status (no web socket), bounded by `timeoutMs`. */
export async function sendAndPoll(connection: Connection, ixs: TransactionInstruction[], signers: Keypair[], timeoutMs = 30_000): Promise<string> {
  const latest = await connection.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: signers[0].publicKey, ...latest }).add(...ixs);
  tx.sign(...signers);
  const sig = await connection.sendRawTransaction(tx.serialize(), { preflightCommitment: 'confirmed' });
  await waitForSignature(connection, sig, timeoutMs);
  return sig;
}

export async function waitForSignature(connection: Connection, sig: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { value } = await connection.getSignatureStatuses([sig], { searchTransactionHistory: true });
    const s = value[0];
    if (s?.err) throw new Error(`${sig} failed: ${JSON.stringify(s.err)}`);
    if (s && (s.confirmationStatus === 'confirmed' || s.confirmationStatus === 'finalized')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${sig} not confirmed within ${timeoutMs} ms`);
}

async function airdrop(connection: Connection, to: PublicKey, lamports: number): Promise<void> {
  await waitForSignature(connection, await connection.requestAirdrop(to, lamports));
}

/**
 * surfnet picks its RPC and web-socket ports itself, free when it looks; another process can bind one
 * before it does. Its web-socket thread then panics (a CI run: "thread 'WebSocket RPC Handler' panicked
 * at … Cannot drop a runtime in a context where blocking is not allowed") and the start never returns.
 */
class SurfnetLostStart extends Error {}

/**
 * Starts surfpool's surfnet in a child process (surfnet-child.cjs) that dies with this one; resolves once
 * it printed its URLs. Its own process: an in-process surfnet stopped answering minutes into a busy run
 * whose event loop it shared (the drill), and a child is stopped by PID like every other node. A start
 * that panicked before it printed them is stopped and made again (its ports are chosen afresh).
 */
function spawnSurfnet(config: Record<string, unknown>, timeoutMs = 60_000): Promise<SurfnetHandle> {
  return startOnFreshPorts(() => spawnOnce(config, timeoutMs), (e) => e instanceof SurfnetLostStart);
}

/** The surfnet's JavaScript is a few lines around a napi module: its node needs no room for a large heap. */
const SURFNET_NODE_FLAGS = ['--max-semi-space-size=1', '--optimize-for-size'];

/** From the project's devnet/, not beside this module: `npm start` runs this module bundled (scripts/build.js). */
const SURFNET_CHILD = path.join(PROJECT_ROOT, 'devnet', 'surfnet-child.cjs');

function spawnOnce(config: Record<string, unknown>, timeoutMs: number): Promise<SurfnetHandle> {
  const [file, argv] = dieWithParent(process.execPath, [...SURFNET_NODE_FLAGS, SURFNET_CHILD, JSON.stringify(config)]);
  const child = spawn(file, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise<SurfnetHandle>((resolve, reject) => {
    let out = '';
    let err = '';
    let started = false;
    const fail = (e: Error) => {
      clearTimeout(timer);
      void stop();
      reject(e);
    };
    const timer = setTimeout(() => fail(new Error(`surfnet did not start within ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code, signal) => fail(new Error(`surfnet exited before it started (code ${code}, signal ${signal})`)));
    child.stderr!.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      if (started) return;
      err = (err + chunk.toString('utf8')).slice(-4000);
      if (/ panicked at /.test(err)) fail(new SurfnetLostStart(`surfnet panicked before it started:\n${err}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      started = true;
      clearTimeout(timer);
      child.stdout!.removeAllListeners('data').resume();
      const { rpcUrl, wsUrl } = JSON.parse(out.slice(0, nl)) as { rpcUrl: string; wsUrl: string };
      resolve({ pid: child.pid!, rpcUrl, wsUrl, stop });
    });
  });
}

/**
 * surfnet on a worker thread of this process (surfnet-child.cjs): its own event loop, and no second copy of
 * Node. A start that does not answer within `timeoutMs` (a port lost to another process makes surfnet's
 * web-socket thread panic, and the start never returns) is given up, and the surfnet is started in a
 * process of its own instead, where such a start is retried on fresh ports.
 */
export async function threadSurfnet(config: Record<string, unknown>, timeoutMs = 20_000, script = SURFNET_CHILD): Promise<SurfnetHandle> {
  const worker = new Worker(script, { workerData: config, stdout: false, stderr: false });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  try {
    const urls = await new Promise<{ rpcUrl: string; wsUrl: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`surfnet's thread did not start within ${timeoutMs} ms`)), timeoutMs);
      worker.once('message', (m: { rpcUrl: string; wsUrl: string }) => (clearTimeout(timer), resolve(m)));
      worker.once('error', (e) => (clearTimeout(timer), reject(e)));
      worker.once('exit', (code) => (clearTimeout(timer), reject(new Error(`surfnet's thread exited before it started (code ${code})`))));
    });
    worker.unref();
    worker.on('error', (e) => process.stderr.write(`surfnet's thread failed: ${e.message}\n`));
    const stop = async () => {
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 10_000);
      await exited;
      clearTimeout(timer);
    };
    return { ...urls, stop };
  } catch (e) {
    void worker.terminate();
    process.stderr.write(`${(e as Error).message}; starting surfnet in a process of its own\n`);
    return spawnSurfnet(config);
  }
}

/**
 * surfpool's surfnet (offline: never reaches mainnet) in its own process, or with `inThread` on a thread of
 * this one, with a funded customer, funded fee payers and a test SPL mint created by real transactions.
 * stop() closes the client's web socket first, then stops the surfnet.
 */
export async function startSurfnet(opts: { fund?: string[]; slotTimeMs?: number; inThread?: boolean } = {}): Promise<SurfnetDevnet> {
  const config = { offline: true, blockProductionMode: 'clock', slotTimeMs: opts.slotTimeMs ?? 100 };
  const sn = await (opts.inThread ? threadSurfnet(config) : spawnSurfnet(config));
  const connection = new Connection(sn.rpcUrl, { commitment: 'confirmed', disableRetryOnRateLimit: true });
  const stop = async () => {
    (connection as unknown as { _rpcWebSocket?: { close(): void } })._rpcWebSocket?.close();
    await sn.stop();
  };
  try {
    const customer = Keypair.generate();
    await airdrop(connection, customer.publicKey, 1000 * LAMPORTS_PER_SOL);
    for (const a of opts.fund ?? []) await airdrop(connection, new PublicKey(a), 100 * LAMPORTS_PER_SOL);
    const mint = Keypair.generate();
    const ata = getAssociatedTokenAddressSync(mint.publicKey, customer.publicKey);
    const rent = await connection.getMinimumBalanceForRentExemption(MINT_SIZE);
    await sendAndPoll(
      connection,
      [
        SystemProgram.createAccount({ fromPubkey: customer.publicKey, newAccountPubkey: mint.publicKey, lamports: rent, space: MINT_SIZE, programId: TOKEN_PROGRAM_ID }),
        createInitializeMint2Instruction(mint.publicKey, 6, customer.publicKey, null),
        createAssociatedTokenAccountIdempotentInstruction(customer.publicKey, ata, customer.publicKey, mint.publicKey),
        createMintToInstruction(mint.publicKey, ata, customer.publicKey, 1_000_000_000_000_000n),
      ],
      [customer, mint],
    );
    return { ...(sn.pid === undefined ? {} : { pid: sn.pid }), rpcUrl: sn.rpcUrl, wsUrl: sn.wsUrl, customerSecret: Array.from(customer.secretKey), tokens: { sol_usdc: mint.publicKey.toBase58() }, connection, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
