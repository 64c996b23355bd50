/**
 * The Solana watcher's block reading (src/chains/sol/scan.ts over plain JSON-RPC) against the web3.js
 * reading it replaced (src/chains/sol/parsed-scan.ts), on the same real surfnet blocks: SOL and SPL
 * payments, a payment into a watched owner's associated token account and one into another token account
 * of the same owner, a failed transaction, a vote-shaped and an irrelevant one. Then the watcher on a
 * cursor more than the RPC's getBlocks range (500,000 slots) behind the head.
 */
import {
  ACCOUNT_SIZE,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeAccount3Instruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { Keypair, PublicKey, SystemProgram, SYSVAR_CLOCK_PUBKEY, Transaction, VoteProgram, type TransactionInstruction } from '@solana/web3.js';
import { NETWORKS } from '../../src/domain/assets';
import { startSurfnet, sendAndPoll, type SurfnetDevnet } from '../../devnet/surfnet';
import { SolAdapter } from '../../src/chains/sol/adapter';
import { SolBlockReader } from '../../src/chains/sol/block-reader';
import { readParsedBlock } from '../../src/chains/sol/parsed-scan';
import { scannedBlock, scannedWatchedBlock } from '../../src/chains/sol/scan';
import { WatchedBytes } from '../../src/chains/sol/watched-bytes';
import { paymentConfigs } from '../../src/db/schema';
import { readCursor, scanOnce, writeCursor, type MatchedDeposit } from '../../src/detection/watcher';
import { createTestDatabase } from '../helpers/db';
import { waitFor } from '../helpers/process';
import { testSeed } from '../helpers/nodes';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(180_000);

let dev: SurfnetDevnet;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let customer: Keypair;
let mint: PublicKey;

beforeAll(async () => {
  database = await createTestDatabase();
  dev = await startSurfnet({ slotTimeMs: 50 });
  customer = Keypair.fromSecretKey(Uint8Array.from(dev.customerSecret));
  mint = new PublicKey(dev.tokens.sol_usdc);
});
afterAll(async () => {
  await dev?.stop();
  await database?.drop();
});

const confirmedSlot = () => dev.connection.getSlot('confirmed');

/** Sent without preflight and left to fail in its block; resolves once its failure is confirmed. */
async function sendFailing(ixs: TransactionInstruction[], signers: Keypair[]): Promise<string> {
  const latest = await dev.connection.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: signers[0].publicKey, ...latest }).add(...ixs);
  tx.sign(...signers);
  const sig = await dev.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
  await waitFor(async () => {
    const s = (await dev.connection.getSignatureStatuses([sig], { searchTransactionHistory: true })).value[0];
    return !!s?.err && (s.confirmationStatus === 'confirmed' || s.confirmationStatus === 'finalized');
  }, 30_000, 'the failing transaction in a block');
  return sig;
}

async function watch(address: string, ticker: 'sol' | 'sol_usdc', index: number): Promise<void> {
  await database.db.insert(paymentConfigs).values({
    ...callbackColumns(`https://shop.example/sol-scan/${index}`), ticker, family: NETWORKS.solana.addressFamily, addressIn: address,
    addressOut: Keypair.generate().publicKey.toBase58(), derivationIndex: BigInt(index), notifyPending: false, notifyConfirmations: 1,
    post: 0, json: 0, convert: 0, priority: 'default',
  });
}

test('the same real blocks give the same deposits and txids as the web3.js reading; the watcher matches exactly the payments it can forward', async () => {
  const adapter = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: dev.rpcUrl, seed: testSeed(), tokens: dev.tokens });
  const [solOwner, ataOwner, otherAccountOwner, failedOwner, stranger] = Array.from({ length: 5 }, () => Keypair.generate().publicKey);
  await watch(solOwner.toBase58(), 'sol', 1);
  await watch(ataOwner.toBase58(), 'sol_usdc', 2);
  await watch(otherAccountOwner.toBase58(), 'sol_usdc', 3);
  await watch(failedOwner.toBase58(), 'sol', 4);
  const from = await adapter.head();
  await writeCursor(database.db, 'solana', from);

  const source = getAssociatedTokenAddressSync(mint, customer.publicKey);
  const ata = getAssociatedTokenAddressSync(mint, ataOwner);
  const solTx = await sendAndPoll(dev.connection, [SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: solOwner, lamports: 3_000_000_000n })], [customer]);
  const splTx = await sendAndPoll(
    dev.connection,
    [
      createAssociatedTokenAccountIdempotentInstruction(customer.publicKey, ata, ataOwner, mint),
      createTransferCheckedInstruction(source, mint, ata, customer.publicKey, 7_000_000n, 6),
    ],
    [customer],
  );
  // A token account of the watched owner that is not its associated one: the gateway does not forward from it.
  const plain = Keypair.generate();
  const rent = await dev.connection.getMinimumBalanceForRentExemption(ACCOUNT_SIZE);
  const plainTx = await sendAndPoll(
    dev.connection,
    [
      SystemProgram.createAccount({ fromPubkey: customer.publicKey, newAccountPubkey: plain.publicKey, lamports: rent, space: ACCOUNT_SIZE, programId: TOKEN_PROGRAM_ID }),
      createInitializeAccount3Instruction(plain.publicKey, mint, otherAccountOwner),
      createTransferCheckedInstruction(source, mint, plain.publicKey, customer.publicKey, 5_000_000n, 6),
    ],
    [customer, plain],
  );
  // Fails in its block: the poor account cannot pay; the customer still pays the fee.
  const poor = Keypair.generate();
  const failedTx = await sendFailing(
    [SystemProgram.transfer({ fromPubkey: poor.publicKey, toPubkey: failedOwner, lamports: 10_000_000_000n })],
    [customer, poor],
  );
  // Vote-shaped: a signer pays the fee, the vote program and a sysvar are read, nobody is paid.
  const voteLike = SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: customer.publicKey, lamports: 0n });
  voteLike.keys.push({ pubkey: VoteProgram.programId, isSigner: false, isWritable: false }, { pubkey: SYSVAR_CLOCK_PUBKEY, isSigner: false, isWritable: false });
  const voteTx = await sendAndPoll(dev.connection, [voteLike], [customer]);
  // Irrelevant: SOL and the token to an owner nobody watches.
  const strangerAta = getAssociatedTokenAddressSync(mint, stranger);
  const strangerTx = await sendAndPoll(
    dev.connection,
    [
      SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: stranger, lamports: 1_000_000n }),
      createAssociatedTokenAccountIdempotentInstruction(customer.publicKey, strangerAta, stranger, mint),
      createTransferCheckedInstruction(source, mint, strangerAta, customer.publicKey, 1_000n, 6),
    ],
    [customer],
  );
  const to = await confirmedSlot();

  // Both readings of every block in the range.
  const reader = new SolBlockReader(dev.rpcUrl);
  const ctx = { network: 'solana', nativeTicker: 'sol', mints: new Map([[dev.tokens.sol_usdc, 'sol_usdc']]) };
  const slots = await reader.slotsAfter(Number(from.height), to, 10_000);
  expect(slots.length).toBeGreaterThan(0);
  const seen = new Set<string>();
  for await (const [slot, raw] of reader.blocks(slots)) {
    const old = await readParsedBlock(dev.connection, slot, ctx);
    expect(raw === null).toBe(old === null);
    if (!raw || !old) continue;
    const fast = scannedBlock(raw, slot, ctx);
    expect(fast.hash).toBe(old.hash);
    expect(fast.txids).toEqual(old.txids);
    // Candidates the block's last check keeps are the old reading's deposits, in its order.
    expect(fast.deposits.filter((d) => fast.confirm!(d))).toEqual(old.deposits);
    for (const id of fast.txids!) seen.add(id);
  }
  for (const tx of [solTx, splTx, plainTx, failedTx, voteTx, strangerTx]) expect(seen).toContain(tx);

  // The watcher's reading with the watched addresses known: the same blocks, only the transactions that name
  // a watched address parsed, the same deposits to watched recipients as the full reading; a block naming
  // none read for its hash alone.
  const watchedSet = new Set([solOwner, ataOwner, otherAccountOwner, failedOwner].map((k) => k.toBase58()));
  const among = new WatchedBytes();
  for (const a of watchedSet) among.add(a);
  let skipped = 0;
  const watchedTxids = new Set<string>();
  for await (const [slot, bytes] of reader.blocks(slots, (s) => reader.blockBytes(s))) {
    const old = await readParsedBlock(dev.connection, slot, ctx);
    expect(bytes === null).toBe(old === null);
    if (!bytes || !old) continue;
    const fast = scannedWatchedBlock(bytes, slot, ctx, among);
    expect(fast.hash).toBe(old.hash);
    expect(fast.deposits.filter((d) => watchedSet.has(d.recipient) && fast.confirm!(d))).toEqual(old.deposits.filter((d) => watchedSet.has(d.recipient)));
    if (fast.txids!.length === 0) skipped++;
    for (const id of fast.txids!) watchedTxids.add(id);
  }
  expect(skipped).toBeGreaterThan(0);
  // The transactions naming a watched address, failed or not; not the vote-shaped or the irrelevant one.
  expect([solTx, splTx, plainTx, failedTx].every((tx) => watchedTxids.has(tx))).toBe(true);
  expect(watchedTxids.has(voteTx) || watchedTxids.has(strangerTx)).toBe(false);

  // The watcher (the adapter's scan and the match) finds the SOL payment and the one into the associated
  // token account, with their amounts; not the other token account, the failed transaction or the rest.
  const matched: MatchedDeposit[] = [];
  for (let pass = 0; (await readCursor(database.db, 'solana'))!.height < BigInt(to) && pass < 50; pass++) {
    matched.push(...(await scanOnce(adapter, database.db, 'solana', { maxBlocks: 100 })));
  }
  expect(matched.map((m) => [m.deposit.txid, m.deposit.ticker, m.deposit.recipient, m.deposit.amount])).toEqual([
    [solTx, 'sol', solOwner.toBase58(), 3_000_000_000n],
    [splTx, 'sol_usdc', ataOwner.toBase58(), 7_000_000n],
  ]);
  await adapter.close();
});

test('a cursor more than 500,000 slots behind the head (a long outage) resumes: the blocks after it are read in order', async () => {
  const adapter = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: dev.rpcUrl, seed: testSeed(), tokens: dev.tokens });
  const cursor = await adapter.head();
  const travel = await new SolBlockReader(dev.rpcUrl).rpc<{ absoluteSlot: number }>('surfnet_timeTravel', [{ absoluteSlot: Number(cursor.height) + 1_200_000 }]);
  expect(travel.absoluteSlot).toBe(Number(cursor.height) + 1_200_000);
  await waitFor(async () => (await confirmedSlot()) > Number(cursor.height) + 500_000, 30_000, 'the head past the jump');
  const batch = await adapter.scan(cursor, 20);
  expect(batch.rewound).toBe(false);
  expect(batch.blocks.length).toBe(20);
  expect(batch.blocks[0].height).toBeGreaterThan(cursor.height);
  const heights = batch.blocks.map((b) => b.height);
  expect(heights).toEqual([...heights].sort((a, b) => (a < b ? -1 : 1)));
  expect(batch.cursor).toEqual({ height: heights[19], hash: batch.blocks[19].hash });
  // The next batch goes on from there.
  const next = await adapter.scan(batch.cursor, 20);
  expect(next.blocks[0].height).toBeGreaterThan(heights[19]);
  await adapter.close();
});

test('an RPC URL with credentials is read (they travel as a Basic authorization header)', async () => {
  const u = new URL(dev.rpcUrl);
  u.username = 'gateway';
  u.password = 's3cret:with@signs';
  const adapter = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: u.toString(), seed: testSeed(), tokens: dev.tokens });
  const head = await adapter.head();
  await waitFor(async () => (await confirmedSlot()) > Number(head.height) + 2, 30_000, 'two slots');
  const batch = await adapter.scan({ height: head.height, hash: head.hash }, 5);
  expect(batch.blocks.length).toBeGreaterThan(0);
  await adapter.close();
});
