/**
 * The watchers at mainnet density (issue 57, DESIGN 13): local chains filled the way mainnet fills its
 * blocks, and the watcher's cost of reading them, in this process (the nodes run in their own).
 *
 *   npm run bench -- mainnet-density.ts
 *   npx tsx bench/mainnet-density.ts --sol-txs 6000 --slot-ms 2000 --evm-blocks 10 --btc-blocks 3 [--skip-old] [--only sol|replay|evm|utxo]
 *
 * Solana: surfnet slots filled with as many transactions as surfnet executes in a slot (half vote-shaped,
 * SPL transfers of the watched mint, SOL transfers; bench/density/sol-fill.ts). Per filled block: this
 * process's CPU and wall time to fetch, parse, detect and match it (the watcher's per-block work), the
 * same for the former web3.js reading (unless --skip-old), the cost per transaction and, from it, per
 * mainnet block (3,000 transactions every 400 ms). Then the catch-up: the watcher's passes (scanOnce)
 * over the whole backlog. Then a replay: a generated 3,000-transaction block, served as a node would,
 * through the same reading (said so in its lines). Ethereum: anvil blocks of 200 transactions with 400
 * ERC-20 Transfer logs (bench/density/evm-fill.ts), per block against the 12 s slot, and the catch-up. Bitcoin:
 * Knots regtest blocks of 3,000 transactions (bench/density/utxo-fill.ts) against 600 s (Litecoin 150 s).
 * Targets: at most 20 % of a core at the network's rate; catch-up at least 5 times the chain's rate.
 */
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { Wallet } from 'ethers';
import { startSurfnet, type SurfnetDevnet } from '../devnet/surfnet';
import { HdSeed } from '../src/chains/keys';
import { SolAdapter } from '../src/chains/sol/adapter';
import { SolBlockReader } from '../src/chains/sol/block-reader';
import { readParsedBlock } from '../src/chains/sol/parsed-scan';
import { scannedBlock, scannedWatchedBlock } from '../src/chains/sol/scan';
import { outlineBlock, watchedNamed } from '../src/chains/sol/block-bytes';
import { WatchedBytes } from '../src/chains/sol/watched-bytes';
import { matchBlock, readCursor, scanOnce, writeCursor } from '../src/detection/watcher';
import { watchedAddressesOf } from '../src/detection/watched-addresses';
import { openPostgres, type Database } from '../src/db/client';
import { sql } from 'drizzle-orm';
import { callbackValues } from '../test/helpers/callback-columns';
import { benchServer } from './lib/database';
import { fillSurfnet } from './density/sol-fill';
import { mainnetShapedBlock, serveBlock } from './density/sol-replay';
import { bitcoin } from './density/bitcoin';
import { ethereum } from './density/ethereum';
import { MAINNET, WATCHED, catchUp, f, fit, mainnetLine, median, timed, verdict, watchRandom, type Timing } from './density/measure';

const { values: flags } = parseArgs({
  options: {
    'sol-txs': { type: 'string', default: '6000' },
    'slot-ms': { type: 'string', default: '2000' },
    'evm-blocks': { type: 'string', default: '10' },
    'btc-blocks': { type: 'string', default: '3' },
    'replay-rounds': { type: 'string', default: '10' },
    'skip-old': { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
async function solana(db: Database['db']): Promise<void> {
  const dev = await startSurfnet({ slotTimeMs: Number(flags['slot-ms']) });
  const seed = HdSeed.fromMnemonic(Wallet.createRandom().mnemonic!.phrase);
  const adapter = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: dev.rpcUrl, seed, tokens: dev.tokens });
  try {
    await watchRandom(db, 'sol', 'sol_usdc', () => new PublicKey(randomBytes(32)).toBase58());
    const fill = await fillSurfnet(dev, Number(flags['sol-txs']));
    const reader = new SolBlockReader(dev.rpcUrl);
    const ctx = { network: 'solana', nativeTicker: 'sol', mints: new Map([[dev.tokens.sol_usdc, 'sol_usdc']]) };
    const slots = await reader.slotsAfter(fill.from, fill.to, 1_000_000);
    const sizes = new Map<number, number>();
    for await (const [slot, b] of reader.blocks(slots)) if (b?.transactions.length) sizes.set(slot, b.transactions.length);
    const filled = [...sizes.keys()];
    const txs = [...sizes.values()].reduce((a, b) => a + b, 0);
    console.log(
      `solana (surfnet, ${flags['slot-ms']} ms slots): ${fill.sent} transactions sent (${fill.failedToSend} refused) landed in ${filled.length} blocks of ${slots.length} in the range; ` +
        `transactions per filled block: median ${median([...sizes.values()])}, max ${Math.max(...sizes.values())}`,
    );
    const biggest = Math.max(...sizes.values());
    if (biggest < MAINNET.solana.txs) console.log(`  surfnet did not reach mainnet's ${MAINNET.solana.txs} transactions a block here (at most ${biggest}): mainnet figures are extrapolated from the cost per transaction`);
    const among = watchedNow(db);
    const sides: Array<[string, (slot: number) => Promise<unknown>]> = [
      ['watcher (watched list refreshed, only transactions naming a watched address parsed)', async (slot) => matchBlock(db, 'solana', scannedWatchedBlock((await reader.blockBytes(slot))!, slot, ctx, await among()))],
      ['JSON-RPC accounts, whole block parsed (the reading before)', async (slot) => matchBlock(db, 'solana', scannedBlock((await reader.block(slot))!, slot, ctx))],
    ];
    if (!flags['skip-old']) sides.push(['former web3.js getParsedBlock', async (slot) => matchBlock(db, 'solana', (await readParsedBlock(dev.connection, slot, ctx))!)]);
    const perTx: Record<string, number> = {};
    const sizesOf = filled.map((slot) => sizes.get(slot)!);
    for (const [name, read] of sides) {
      const t: Timing[] = [];
      for (const slot of filled) t.push(await timed(() => read(slot)));
      // Blocks far below mainnet's size: a fit whose slope is not positive (noise) gives way to the plain
      // average per transaction, which charges the per-block part to every transaction (an upper bound).
      const perTxOr = (ys: number[]) => {
        const line = fit(sizesOf, ys);
        return line.b > 0 ? line : { a: 0, b: ys.reduce((a, y) => a + y, 0) / txs };
      };
      const cpu = perTxOr(t.map((x) => x.cpuMs));
      const wall = perTxOr(t.map((x) => x.wallMs));
      perTx[name] = cpu.b;
      console.log(
        `  ${name}: per filled block (fetch, parse, detect, match) median ${f(median(t.map((x) => x.cpuMs)))} ms CPU, ${f(median(t.map((x) => x.wallMs)))} ms wall; ` +
          `fitted ${f(cpu.a)} ms CPU per block + ${f(cpu.b * 1000, 0)} µs CPU per transaction (wall ${f(wall.a)} ms + ${f(wall.b * 1000, 0)} µs)`,
      );
      mainnetLine('solana', name, cpu, wall);
    }
    const [now, ...before] = Object.values(perTx);
    for (const [k, b] of before.entries()) console.log(`  ${Object.keys(perTx)[k + 1]} / watcher, CPU per transaction: ${f(b / now)}×`);
    const c = await catchUp('solana', adapter, db, { height: BigInt(fill.from), hash: null }, BigInt(fill.to), 100);
    const txPerS = txs / (c.wallMs / 1000);
    const chainTxPerS = (MAINNET.solana.txs * 1000) / MAINNET.solana.intervalMs;
    console.log(
      `  catch-up (scanOnce passes of 100 blocks over the backlog of ${slots.length} blocks, ${txs} tx): ${f(c.wallMs / 1000, 2)} s wall, ${f(c.cpuMs / 1000, 2)} s CPU: ` +
        `${f(slots.length / (c.wallMs / 1000), 1)} blocks/s at this density (mainnet: 2.5), ${f(txPerS, 0)} tx/s = ${f(txPerS / chainTxPerS, 2)}× mainnet's ${chainTxPerS} tx/s (target ≥ 5×: ${verdict(txPerS / chainTxPerS >= 5)}; ` +
        `at this density the per-block part dominates: the replay below is the mainnet-size figure)`,
    );
    await liveDetection(dev, adapter, db);
  } finally {
    await adapter.close();
    await dev.stop();
  }
}

/**
 * Live: the watcher's passes (scanOnce, as the worker runs them) following the head while surfnet is filled
 * as densely as above, and one SOL deposit to a watched address sent halfway through the fill: the time from
 * its sending to its match, and how far behind the head the watcher was meanwhile.
 */
async function liveDetection(dev: SurfnetDevnet, adapter: SolAdapter, db: Database['db']): Promise<void> {
  const customer = Keypair.fromSecretKey(Uint8Array.from(dev.customerSecret));
  const to = Keypair.generate().publicKey;
  const index = WATCHED + 2;
  await db.execute(sql`INSERT INTO payment_configs (callback_url, callback_key, callback_host, ticker, family, address_in, address_out, derivation_index, notify_pending, notify_confirmations, post, json, convert, priority)
    VALUES (${callbackValues(`https://shop.example/sol/${index}`)}, 'sol', 'sol', ${to.toBase58()}, ${to.toBase58()}, ${index}, false, 1, 0, 0, 0, 'default')`);
  const reader = new SolBlockReader(dev.rpcUrl);
  await writeCursor(db, 'solana', { height: BigInt(await reader.slot()), hash: null });
  const count = Number(flags['sol-txs']);
  let sentAt = 0;
  let txid = '';
  let done = false;
  // A surfnet busy with the fill may answer "unhealthy" for a while: the deposit is sent again until it takes it.
  const send = async () => {
    sentAt = performance.now();
    for (let attempt = 0; attempt < 60 && !txid; attempt++) {
      try {
        const { blockhash } = await dev.connection.getLatestBlockhash('confirmed');
        const tx = new Transaction({ feePayer: customer.publicKey, recentBlockhash: blockhash }).add(SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: to, lamports: 5_000_000n }));
        tx.sign(customer);
        sentAt = performance.now();
        txid = await dev.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  const fill = fillSurfnet(dev, count, (sent) => {
    if (sent >= count / 2 && sentAt === 0) sending = send();
  }).finally(() => (done = true));
  let sending: Promise<void> | undefined;
  let detectedAt = 0;
  const behind: number[] = [];
  const deadline = performance.now() + 300_000;
  while (detectedAt === 0 && performance.now() < deadline) {
    const matched = await scanOnce(adapter, db, 'solana', { maxBlocks: 100 });
    const cursor = (await readCursor(db, 'solana'))!.height;
    behind.push(Number(BigInt(await reader.slot()) - cursor));
    if (matched.some((m) => m.deposit.recipient === to.toBase58())) detectedAt = performance.now();
    else if (done && sentAt === 0) break;
    else await new Promise((r) => setTimeout(r, 100));
  }
  const filled = await fill;
  await sending;
  const status = txid ? (await dev.connection.getSignatureStatuses([txid], { searchTransactionHistory: true })).value[0] : null;
  const slotTxs = status ? ((await reader.block(status.slot))?.transactions.length ?? 0) : 0;
  console.log(
    `  live: the watcher following the head while ${filled.sent} transactions were sent; one deposit sent halfway landed in slot ${status?.slot ?? '?'} among ${slotTxs} transactions, ` +
      (detectedAt ? `matched ${f((detectedAt - sentAt) / 1000, 2)} s after it was sent` : 'NOT matched') +
      `; slots behind the head after each pass: median ${median(behind)}, max ${Math.max(...behind)}`,
  );
}

async function solanaReplay(db: Database['db']): Promise<void> {
  const mint = new PublicKey(randomBytes(32)).toBase58();
  const json = mainnetShapedBlock(MAINNET.solana.txs, mint);
  const server = await serveBlock(json);
  try {
    const reader = new SolBlockReader(server.url);
    const ctx = { network: 'solana', nativeTicker: 'sol', mints: new Map([[mint, 'sol_usdc']]) };
    const among = watchedNow(db);
    const rounds = Number(flags['replay-rounds']);
    const watcher = async () => matchBlock(db, 'solana', scannedWatchedBlock((await reader.blockBytes(1))!, 1, ctx, await among()));
    const former = async () => matchBlock(db, 'solana', scannedBlock((await reader.block(1))!, 1, ctx));
    // The readings take turns, round by round, so that a load that comes and goes weighs on each alike.
    const run = async (reads: Array<() => Promise<unknown[]>>) => {
      const t = reads.map(() => [] as Array<Timing & { value: unknown[] }>);
      for (let r = 0; r < rounds; r++) for (let k = 0; k < reads.length; k++) t[k].push(await timed(reads[k]));
      return t.map((x) => ({ cpu: median(x.map((y) => y.cpuMs)), least: Math.min(...x.map((y) => y.cpuMs)), wall: median(x.map((y) => y.wallMs)), matched: x[0].value.length }));
    };
    const line = (name: string, r: { cpu: number; least: number; wall: number; matched: number }) =>
      console.log(
        `  ${name}: per block median ${f(r.cpu)} ms CPU (least ${f(r.least)}), ${f(r.wall)} ms wall, ${f((r.cpu * 1000) / MAINNET.solana.txs, 1)} µs CPU per tx = ` +
          `${f((100 * r.cpu) / MAINNET.solana.intervalMs)} % of a core at 400 ms (target ≤ 80 ms: ${verdict(r.cpu <= 80)}); ${r.matched} deposits matched`,
      );
    console.log(`solana REPLAY (a generated mainnet-shaped block of ${MAINNET.solana.txs} tx, ${f(json.length / 1e6)} MB as 'accounts', served by another process; ${rounds} rounds)`);
    const [skip, full] = await run([watcher, former]);
    line('watcher, no watched address in the block (fetch, named addresses, one lookup)', skip);
    line('former reading (JSON.parse of the whole block, every candidate matched)', full);
    // Where the time goes, step by step (CPU of each).
    const parts = { fetch: [] as number[], named: [] as number[], lookup: [] as number[], outline: [] as number[], parse: [] as number[] };
    let addresses = 0;
    for (let r = 0; r < rounds; r++) {
      const raw = await timed(async () => (await reader.blockBytes(1))!);
      const l = await timed(() => among());
      const n = await timed(async () => watchedNamed(raw.value, l.value)!);
      const o = await timed(async () => outlineBlock(raw.value));
      const p = await timed(async () => JSON.parse(raw.value.toString('utf8')) as unknown);
      addresses = l.value.size;
      parts.fetch.push(raw.cpuMs);
      parts.named.push(n.cpuMs);
      parts.lookup.push(l.cpuMs);
      parts.outline.push(o.cpuMs);
      parts.parse.push(p.cpuMs);
    }
    const m = (xs: number[]) => `${f(median(xs))} (least ${f(Math.min(...xs))})`;
    console.log(
      `  CPU medians, ms: fetch ${m(parts.fetch)}, refresh of the ${addresses} watched addresses ${m(parts.lookup)}, the block's watched addresses ${m(parts.named)}; ` +
        `when one is watched, the outline of the transactions ${m(parts.outline)}; for comparison, JSON.parse of the whole answer ${m(parts.parse)}`,
    );
    // A SOL deposit in the block to an address now watched (one the generator pays in several transactions).
    const parsed = (await reader.block(1))!;
    const paid = parsed.transactions.find((tx, t) => t % 5 === 1 && t % 2 === 1 && !tx.meta?.err)!.transaction.accountKeys[2].pubkey;
    const index = WATCHED + 1;
    await db.execute(sql`INSERT INTO payment_configs (callback_url, callback_key, callback_host, ticker, family, address_in, address_out, derivation_index, notify_pending, notify_confirmations, post, json, convert, priority)
      VALUES (${callbackValues(`https://shop.example/sol/${index}`)}, 'sol', 'sol', ${paid}, ${paid}, ${index}, false, 1, 0, 0, 0, 'default')`);
    const naming = parsed.transactions.filter((tx) => tx.transaction.accountKeys.some((k) => k.pubkey === paid)).length;
    const [hit, fullHit] = await run([watcher, former]);
    line(`watcher, a watched address named in ${naming} of the transactions (fetch, named addresses, lookup, outline, parse of those)`, hit);
    line('former reading of that block', fullHit);
  } finally {
    await server.stop();
  }
}

/** The watcher's list of watched Solana addresses, refreshed, as the byte table its reading probes. */
function watchedNow(db: Database['db']): () => Promise<WatchedBytes> {
  const list = watchedAddressesOf(db, 'sol');
  const bytes = new WatchedBytes();
  let synced = 0;
  return async () => {
    const current = await list.current();
    for (; synced < current.length; synced++) bytes.add(current[synced]);
    return bytes;
  };
}


async function main(): Promise<void> {
  const server = await benchServer();
  const database = await openPostgres(await server.database(), { max: 2 });
  try {
    console.log(`figures of this process only (nodes and PostgreSQL run in their own); ${WATCHED} watched addresses per family; load on the machine counts in every figure`);
    if (flags.only === undefined || flags.only === 'sol') await solana(database.db);
    if (flags.only === undefined || flags.only === 'sol' || flags.only === 'replay') await solanaReplay(database.db);
    if (flags.only === undefined || flags.only === 'evm') await ethereum(database.db, Number(flags['evm-blocks']));
    if (flags.only === undefined || flags.only === 'utxo') await bitcoin(database.db, Number(flags['btc-blocks']));
  } finally {
    await database.close();
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
