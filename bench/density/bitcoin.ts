import { Wallet } from 'ethers';
import { bitcoinNode } from '../../devnet/binaries';
import { startCoreNode } from '../../devnet/core-node';
import { HdSeed } from '../../src/chains/keys';
import { UtxoAdapter } from '../../src/chains/utxo/adapter';
import type { Database } from '../../src/db/client';
import { matchBlock } from '../../src/detection/watcher';
import { tmpDir } from '../../test/helpers/nodes';
import { MAINNET, catchUp, f, mainnetLine, median, timed, verdict, watchRandom, type Timing } from './measure';
import { fillBitcoin, randomBitcoinAddress } from './utxo-fill';

/**
 * Bitcoin Knots regtest blocks of mainnet's 3,000 transactions (bench/density/utxo-fill.ts): the watcher's
 * reading of each (getblock with its transactions, the outputs' recipients, one lookup) against Bitcoin's and
 * Bitcoin Cash's 600 s and Litecoin's 150 s (litecoind answers the same getblock; bchd's is read alike), and
 * its catch-up over them.
 */
export async function bitcoin(db: Database['db'], blocksToFill: number): Promise<void> {
  const dir = tmpDir('gw-bench-density-');
  const cmd = bitcoinNode();
  if (cmd?.family !== 'core') throw new Error('the Bitcoin density figure wants Bitcoin Knots (npm run devnet -- install)');
  // Knots mines blocks of 300 kB by default; mainnet's are full (4 M weight units).
  const st = await startCoreNode({ dir, cmd, extraArgs: ['-blockmaxsize=4000000', '-blockmaxweight=4000000'] });
  const seed = HdSeed.fromMnemonic(Wallet.createRandom().mnemonic!.phrase);
  const adapter = new UtxoAdapter({ network: 'bitcoin', mode: 'regtest', rpcUrl: st.rpcUrl, seed });
  try {
    await watchRandom(db, 'btc', 'btc', randomBitcoinAddress);
    const fill = await fillBitcoin(st, blocksToFill, MAINNET.bitcoin.txs);
    const t: Timing[] = [];
    let txs = 0;
    for (let h = fill.from + 1; h <= fill.to; h++) {
      t.push(
        await timed(async () => {
          const [b] = (await adapter.scan({ height: BigInt(h - 1), hash: null }, 1)).blocks;
          txs += b.txids?.length ?? 0;
          await matchBlock(db, 'bitcoin', b);
        }),
      );
    }
    const blocks = fill.to - fill.from;
    const cpu = { a: 0, b: median(t.map((x) => x.cpuMs)) / (txs / blocks) };
    const wall = { a: 0, b: median(t.map((x) => x.wallMs)) / (txs / blocks) };
    console.log(`bitcoin (Knots regtest): ${blocks} blocks, ${txs} tx (1 input, 2 outputs each)`);
    console.log(
      `  watcher: per block median ${f(median(t.map((x) => x.cpuMs)))} ms CPU, ${f(median(t.map((x) => x.wallMs)))} ms wall; per transaction ${f(cpu.b * 1000, 0)} µs CPU, ${f(wall.b * 1000, 0)} µs wall`,
    );
    for (const network of ['bitcoin', 'litecoin', 'bitcoincash'] as const) mainnetLine(network, `watcher (${network}, from this cost per transaction)`, cpu, wall);
    const c = await catchUp('bitcoin', adapter, db, { height: BigInt(fill.from), hash: null }, BigInt(fill.to), 20);
    const blocksPerS = blocks / (c.wallMs / 1000);
    const litecoinRate = 1000 / MAINNET.litecoin.intervalMs;
    console.log(
      `  catch-up over the backlog: ${f(c.wallMs / 1000, 2)} s wall, ${f(c.cpuMs / 1000, 2)} s CPU: ${f(blocksPerS, 2)} blocks/s = ${f(blocksPerS / litecoinRate, 0)}× Litecoin's rate, ` +
        `${f((blocksPerS * MAINNET.bitcoin.intervalMs) / 1000, 0)}× Bitcoin's (target ≥ 5×: ${verdict(blocksPerS / litecoinRate >= 5)})`,
    );
  } finally {
    await adapter.close();
    await st.stop();
  }
}
