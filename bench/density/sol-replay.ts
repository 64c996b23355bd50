import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';

/**
 * A generated mainnet-shaped block (the replay mode of bench/mainnet-density.ts), served as a node answers
 * getBlock with transactionDetails 'accounts': `txs` transactions, half of them votes (five keys, no token
 * balances), the rest with a dozen keys and token balances, a third of them of the watched mint (owners
 * that nobody watches, so every rise is a candidate the watcher must look at).
 */
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const VOTE_PROGRAM = 'Vote111111111111111111111111111111111111111';

function keyPool(n: number): string[] {
  return Array.from({ length: n }, () => new PublicKey(randomBytes(32)).toBase58());
}

function signature(): string {
  return new PublicKey(randomBytes(32)).toBase58() + new PublicKey(randomBytes(32)).toBase58();
}

export function mainnetShapedBlock(txs: number, watchedMint: string): string {
  const keys = keyPool(4000);
  const mints = [watchedMint, ...keyPool(20)];
  const pick = () => keys[Math.floor(Math.random() * keys.length)];
  const balance = () => 1_000_000 + Math.floor(Math.random() * 1e12);
  const transactions: unknown[] = [];
  for (let t = 0; t < txs; t++) {
    if (t % 2 === 0) {
      const accountKeys = [
        { pubkey: pick(), signer: true, source: 'transaction', writable: true },
        { pubkey: pick(), signer: false, source: 'transaction', writable: true },
        { pubkey: 'SysvarS1otHashes111111111111111111111111111', signer: false, source: 'transaction', writable: false },
        { pubkey: 'SysvarC1ock11111111111111111111111111111111', signer: false, source: 'transaction', writable: false },
        { pubkey: VOTE_PROGRAM, signer: false, source: 'transaction', writable: false },
      ];
      const pre = accountKeys.map(balance);
      const post = [pre[0] - 5000, ...pre.slice(1)];
      transactions.push({
        meta: { err: null, fee: 5000, preBalances: pre, postBalances: post, preTokenBalances: [], postTokenBalances: [], status: { Ok: null } },
        transaction: { accountKeys, signatures: [signature()] },
        version: 'legacy',
      });
      continue;
    }
    const n = 10 + Math.floor(Math.random() * 6);
    const accountKeys = Array.from({ length: n }, (_, i) => ({ pubkey: i === n - 1 ? TOKEN_PROGRAM : pick(), signer: i === 0, source: i > 8 ? 'lookupTable' : 'transaction', writable: i < 6 }));
    const pre = accountKeys.map(balance);
    const post = pre.map((b, i) => (i === 0 ? b - 5000 - Math.floor(Math.random() * 100_000) : i === 2 && t % 5 === 1 ? b + 2_000_000 : b));
    const tokenBalances = (delta: number) =>
      [1, 3].map((accountIndex, j) => {
        const amount = String(1_000_000_000 + (j === 0 ? -delta : delta));
        return {
          accountIndex, mint: t % 3 === 1 ? watchedMint : mints[1 + (t % 20)], owner: pick(), programId: TOKEN_PROGRAM,
          uiTokenAmount: { amount, decimals: 6, uiAmount: Number(amount) / 1e6, uiAmountString: (Number(amount) / 1e6).toString() },
        };
      });
    const pt = tokenBalances(0);
    const qt = tokenBalances(12_345 + t).map((b, j) => ({ ...b, owner: pt[j].owner }));
    transactions.push({
      meta: { err: t % 37 === 0 ? { InstructionError: [0, { Custom: 1 }] } : null, fee: 5000, preBalances: pre, postBalances: post, preTokenBalances: pt, postTokenBalances: qt, status: { Ok: null } },
      transaction: { accountKeys, signatures: [signature()] },
      version: 0,
    });
  }
  return JSON.stringify({ blockHeight: 1, blockTime: 1, blockhash: new PublicKey(randomBytes(32)).toBase58(), parentSlot: 0, previousBlockhash: '', transactions });
}

// The server runs in a process of its own, so that the figures of the reading process are its own alone.
const SERVER = `
const http = require('node:http');
const block = require('node:fs').readFileSync(process.argv[1]);
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const { id, method } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    res.setHeader('content-type', 'application/json');
    if (method !== 'getBlock') return res.end('{"jsonrpc":"2.0","id":' + id + ',"result":null}');
    res.write('{"jsonrpc":"2.0","id":' + id + ',"result":');
    res.write(block);
    res.end('}');
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

/**
 * Runs `script` (node -e) in a process of its own with a throw-away file holding `content` as its last
 * argument; the script prints the port it listens on. stop() kills it and removes the file.
 */
export async function spawnServer(script: string, args: string[], content: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-sol-server-'));
  const file = path.join(dir, 'content.json');
  writeFileSync(file, content);
  const child = spawn(process.execPath, ['-e', script, ...args, file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill();
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Answers every getBlock with `blockJson`; anything else with null. */
export async function serveBlock(blockJson: string): Promise<{ url: string; stop(): Promise<void> }> {
  return spawnServer(SERVER, [], blockJson);
}
