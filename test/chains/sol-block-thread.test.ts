/**
 * The thread that fetches and scans the Solana watcher's blocks (src/chains/sol/block-thread.ts). A node's
 * answer that the thread cannot hold (a block of a few hundred thousand transactions that all name a watched
 * address, against a thread's heap bounded for the test) ends the thread: that read fails as the node being
 * unavailable, the next read starts another thread and reads the block, and the watcher's cursor never moves
 * past the block that could not be read (on a live surfnet, with a real deposit in that block). The node's
 * other answers are classified through the thread as they are without it, and an endpoint's credentials reach
 * it as a Basic authorization header.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Keypair, PublicKey, SystemProgram } from '@solana/web3.js';
import { NodeUnavailableError } from '../../src/chains/adapter';
import { SolAdapter } from '../../src/chains/sol/adapter';
import { SolBlockReader } from '../../src/chains/sol/block-reader';
import { SolBlockThread } from '../../src/chains/sol/block-thread';
import { HttpStatusError, RpcTransportError } from '../../src/chains/sol/rpc';
import { NETWORKS } from '../../src/domain/assets';
import { paymentConfigs } from '../../src/db/schema';
import { readCursor, scanOnce, writeCursor } from '../../src/detection/watcher';
import { sendAndPoll, startSurfnet, type SurfnetDevnet } from '../../devnet/surfnet';
import { createTestDatabase } from '../helpers/db';
import { freePort } from '../../devnet/devserver';
import { testSeed } from '../helpers/nodes';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(180_000);

const key = () => Keypair.generate().publicKey.toBase58();
const SMALL_HEAP = { maxOldGenerationSizeMb: 16 };

function tx(signature: string, payee: string): string {
  return JSON.stringify({
    meta: { err: null, preBalances: [10_000_000, 0], postBalances: [4_995_000, 5_000_000], preTokenBalances: [], postTokenBalances: [] },
    transaction: { accountKeys: [{ pubkey: key(), signer: true }, { pubkey: payee, signer: false }], signatures: [signature] },
  });
}

/** A node's answer holding `txs` (JSON texts) as its block's transactions. */
function blockAnswer(id: unknown, blockhash: string, txs: string[]): string {
  return `{"jsonrpc":"2.0","result":{"blockhash":"${blockhash}","parentSlot":1,"transactions":[${txs.join(',')}]},"id":${JSON.stringify(id)}}`;
}

/** Far more than SMALL_HEAP once the thread holds each as a string: 400,000 payments to `payee`. */
function hugeBlockAnswer(id: unknown, blockhash: string, payee: string): string {
  const one = tx('x'.repeat(88), payee);
  return blockAnswer(id, blockhash, new Array<string>(400_000).fill(one));
}

/** An HTTP server on 127.0.0.1 answering each JSON-RPC request with `answer(call)`. */
async function serve(
  answer: (call: { id: unknown; method: string; params: unknown[] }, res: http.ServerResponse, req: http.IncomingMessage) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => answer(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params: unknown[] }, res, req));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test('a thread that cannot hold an answer fails that read as the node being unavailable; the next read starts another', async () => {
  const watched = key();
  const blockhash = new PublicKey(Keypair.generate().publicKey).toBase58();
  const sig = 'S'.repeat(88);
  let huge = 1;
  const node = await serve((call, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(huge-- > 0 ? hugeBlockAnswer(call.id, blockhash, watched) : blockAnswer(call.id, blockhash, [tx('V'.repeat(88), key()), tx(sig, watched)]));
  });
  const reader = new SolBlockReader(node.url, 4, 30_000, new SolBlockThread(SMALL_HEAP));
  try {
    const lost = await reader.watchedBlock(7, [watched]).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(NodeUnavailableError);
    expect((lost as Error).message).toMatch(/block thread lost: .*memory/i);
    const block = await reader.watchedBlock(7, [watched]);
    expect(block!.blockhash).toBe(blockhash);
    expect(block!.transactions.map((t) => t.transaction.signatures[0])).toEqual([sig]);
  } finally {
    reader.close();
    await node.close();
  }
});

test("a node's other answers are classified through the thread as without it; credentials travel as a Basic header", async () => {
  const statuses: Record<number, (id: unknown) => [number, string]> = {
    1: () => [503, 'busy'],
    2: (id) => [200, JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32007, message: 'Slot 2 was skipped' } })],
    3: (id) => [200, JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32004, message: 'Block not available for slot 3' } })],
    4: (id) => [200, JSON.stringify({ jsonrpc: '2.0', id, result: null })],
  };
  const auth: Array<string | undefined> = [];
  const node = await serve((call, res, req) => {
    auth.push(req.headers.authorization);
    const [status, body] = statuses[call.params[0] as number](call.id);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  });
  const u = new URL(node.url);
  u.username = 'gateway';
  u.password = 's3cret';
  const reader = new SolBlockReader(u.toString());
  const closed = new SolBlockReader(`http://127.0.0.1:${await freePort('127.0.0.1')}`);
  try {
    await expect(reader.watchedBlock(1, [])).rejects.toBeInstanceOf(HttpStatusError);
    await expect(reader.watchedBlock(2, [])).resolves.toBeNull();
    await expect(reader.watchedBlock(3, [])).rejects.toBeInstanceOf(NodeUnavailableError);
    await expect(reader.watchedBlock(4, [])).resolves.toBeNull();
    const refused = await closed.watchedBlock(5, []).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RpcTransportError);
    expect((refused as RpcTransportError).code).toBe('ECONNREFUSED');
    expect(auth).toEqual(Array(4).fill(`Basic ${Buffer.from('gateway:s3cret').toString('base64')}`));
  } finally {
    reader.close();
    closed.close();
    await node.close();
  }
});

describe('on a live surfnet', () => {
  let dev: SurfnetDevnet;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    database = await createTestDatabase();
    dev = await startSurfnet({ slotTimeMs: 50 });
  });
  afterAll(async () => {
    await dev?.stop();
    await database?.drop();
  });

  test('the watcher never moves its cursor past a block the thread could not read, and finds its deposit once it can', async () => {
    const payee = Keypair.generate().publicKey;
    // surfnet behind a proxy that answers the deposit's block once with one the thread cannot hold.
    let armed: number | null = null;
    const proxy = await serve((call, res) => {
      res.setHeader('content-type', 'application/json');
      // Only the watcher's read of the block's transactions: the head's hash of the same slot (transactionDetails none) passes.
      if (call.method === 'getBlock' && call.params[0] === armed && (call.params[1] as { transactionDetails?: string } | undefined)?.transactionDetails === 'accounts') {
        armed = null;
        return res.end(hugeBlockAnswer(call.id, key(), payee.toBase58()));
      }
      const up = http.request(dev.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' } }, (r) => r.pipe(res));
      up.end(JSON.stringify(call));
    });
    const adapter = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: proxy.url, seed: testSeed(), tokens: dev.tokens, blockThread: new SolBlockThread(SMALL_HEAP) });
    try {
      await database.db.insert(paymentConfigs).values({
        ...callbackColumns('https://shop.example/sol-block-thread'), ticker: 'sol', family: NETWORKS.solana.addressFamily, addressIn: payee.toBase58(),
        addressOut: key(), derivationIndex: 1n, notifyPending: false, notifyConfirmations: 1, post: 0, json: 0, convert: 0, priority: 'default',
      });
      const from = await adapter.head();
      await writeCursor(database.db, 'solana', from);
      const customer = Keypair.fromSecretKey(Uint8Array.from(dev.customerSecret));
      const txid = await sendAndPoll(dev.connection, [SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: payee, lamports: 1_000_000_000n })], [customer]);
      const slot = (await dev.connection.getSignatureStatuses([txid])).value[0]!.slot;
      armed = slot;

      await expect(scanOnce(adapter, database.db, 'solana', { maxBlocks: 1000 })).rejects.toThrow(/block thread lost/);
      expect(armed).toBeNull();
      expect((await readCursor(database.db, 'solana'))!.height).toBeLessThan(BigInt(slot));

      const matched = [];
      for (let pass = 0; matched.length === 0 && pass < 20; pass++) matched.push(...(await scanOnce(adapter, database.db, 'solana', { maxBlocks: 1000 })));
      expect(matched.map((m) => [m.deposit.txid, m.deposit.recipient, m.deposit.amount, m.deposit.blockNumber])).toEqual([[txid, payee.toBase58(), 1_000_000_000n, BigInt(slot)]]);
    } finally {
      await adapter.close();
      await proxy.close();
    }
  });
});
