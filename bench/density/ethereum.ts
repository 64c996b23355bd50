import { Wallet } from 'ethers';
import { startAnvil } from '../../devnet/anvil';
import { EvmAdapter } from '../../src/chains/evm/adapter';
import { HdSeed } from '../../src/chains/keys';
import type { Database } from '../../src/db/client';
import { matchBlock } from '../../src/detection/watcher';
import { tmpDir } from '../../test/helpers/nodes';
import { fillAnvil } from './evm-fill';
import { MAINNET, catchUp, f, mainnetLine, median, timed, verdict, watchRandom, type Timing } from './measure';

/**
 * Anvil blocks of mainnet's 200 transactions with 400 ERC-20 Transfer logs (evm-fill.ts): the watcher's reading
 * of each against the 12 s slot, and its catch-up over them.
 */
export async function ethereum(db: Database['db'], blocksToFill: number): Promise<void> {
  const node = await startAnvil({ dir: tmpDir('gw-bench-density-') });
  const seed = HdSeed.fromMnemonic(Wallet.createRandom().mnemonic!.phrase);
  const adapter = new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: node.rpcUrl, chainId: node.chainId, seed, tokens: node.tokens });
  try {
    await watchRandom(db, 'evm', 'erc20_usdt', () => Wallet.createRandom().address);
    const fill = await fillAnvil(node, blocksToFill);
    const heights = Array.from({ length: fill.to - fill.from }, (_, i) => BigInt(fill.from + 1 + i));
    const t: Timing[] = [];
    let txs = 0;
    let logs = 0;
    for (const h of heights) {
      t.push(
        await timed(async () => {
          const b = await adapter.scanBlock(h);
          txs += b.txids?.length ?? 0;
          logs += b.deposits.filter((d) => d.ticker !== 'eth').length;
          await matchBlock(db, 'ethereum', b);
        }),
      );
    }
    // Every block has mainnet's size: its per-block figure is the mainnet one.
    const cpu = { a: 0, b: median(t.map((x) => x.cpuMs)) / (txs / heights.length) };
    const wall = { a: 0, b: median(t.map((x) => x.wallMs)) / (txs / heights.length) };
    console.log(`ethereum (anvil): ${heights.length} blocks, ${txs} tx, ${logs} ERC-20 Transfer deposits`);
    console.log(
      `  watcher: per block median ${f(median(t.map((x) => x.cpuMs)))} ms CPU, ${f(median(t.map((x) => x.wallMs)))} ms wall; per transaction ${f(cpu.b * 1000, 0)} µs CPU, ${f(wall.b * 1000, 0)} µs wall`,
    );
    mainnetLine('ethereum', 'watcher', cpu, wall);
    const c = await catchUp('ethereum', adapter, db, { height: BigInt(fill.from), hash: null }, BigInt(fill.to), 50);
    const blocksPerS = heights.length / (c.wallMs / 1000);
    const chainRate = 1000 / MAINNET.ethereum.intervalMs;
    console.log(
      `  catch-up over the backlog: ${f(c.wallMs / 1000, 2)} s wall, ${f(c.cpuMs / 1000, 2)} s CPU: ${f(blocksPerS, 1)} blocks/s = ${f(blocksPerS / chainRate, 0)}× the chain's rate (target ≥ 5×: ${verdict(blocksPerS / chainRate >= 5)})`,
    );
  } finally {
    adapter.provider.destroy();
    await node.stop();
  }
}
