/**
 * The EVM adapter's JSON-RPC transport under a burst (src/chains/evm/adapter.ts): `--callers` callers, each
 * making `--calls` calls one after another (as forwards in flight do), against a real anvil, with the
 * adapter's batching (ETHEREUM_RPC_BATCH, default 10) and with each call an HTTP request of its own
 * (ETHEREUM_RPC_BATCH=1, what the adapter did before). Per round: this process's CPU per call and the
 * round's wall time; then the medians and the ratio batched / alone. Both sides are checked to give the
 * same answers first.
 *
 *   npx tsx bench/evm-rpc.ts                         (200 callers × 20 calls, 3 rounds per side, interleaved)
 *   npx tsx bench/evm-rpc.ts --callers 50 --calls 40 --rounds 5
 */
import { parseArgs } from 'node:util';
import { Wallet } from 'ethers';
import { DEFAULT_RPC_BATCH } from '../src/chains/config';
import { startAnvil } from '../devnet/anvil';
import { EvmAdapter } from '../src/chains/evm/adapter';
import { HdSeed } from '../src/chains/keys';
import { tmpDir } from '../test/helpers/nodes';

const { values: flags } = parseArgs({
  options: { callers: { type: 'string', default: '200' }, calls: { type: 'string', default: '20' }, rounds: { type: 'string', default: '3' } },
});
const CALLERS = Number(flags.callers);
const CALLS = Number(flags.calls);
const ROUNDS = Number(flags.rounds);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const node = await startAnvil({ dir: tmpDir('gw-bench-rpc-') });
  try {
    const seed = HdSeed.fromMnemonic(Wallet.createRandom().mnemonic!.phrase);
    const make = (rpcBatch: number) => new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: node.rpcUrl, rpcBatch, chainId: node.chainId, seed, tokens: node.tokens });
    const sides = { batched: make(DEFAULT_RPC_BATCH), alone: make(1) };
    const addresses = Array.from({ length: CALLERS }, () => Wallet.createRandom().address);
    const answers = await Promise.all(
      Object.values(sides).map((a) => Promise.all(addresses.map((x) => a.provider.getTransactionCount(x, 'pending')))),
    );
    if (JSON.stringify(answers[0]) !== JSON.stringify(answers[1])) throw new Error('the two sides answered differently');
    const figures: Record<keyof typeof sides, { cpu: number[]; wall: number[] }> = { batched: { cpu: [], wall: [] }, alone: { cpu: [], wall: [] } };
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['batched', 'alone'] as const) : (['alone', 'batched'] as const);
      for (const side of order) {
        const provider = sides[side].provider;
        const before = process.cpuUsage();
        const t0 = performance.now();
        await Promise.all(
          addresses.map(async (x) => {
            for (let i = 0; i < CALLS; i++) await provider.getTransactionCount(x, 'pending');
          }),
        );
        const used = process.cpuUsage(before);
        figures[side].wall.push(performance.now() - t0);
        figures[side].cpu.push((used.user + used.system) / (CALLERS * CALLS));
      }
    }
    for (const [side, f] of Object.entries(figures)) {
      console.log(
        `${side.padEnd(8)} CPU per call: median ${median(f.cpu).toFixed(0)} µs (rounds: ${f.cpu.map((x) => x.toFixed(0)).join(', ')}); ` +
          `wall per round: median ${median(f.wall).toFixed(0)} ms`,
      );
    }
    console.log(`ratio batched / alone: CPU per call ${(median(figures.batched.cpu) / median(figures.alone.cpu)).toFixed(2)}, wall ${(median(figures.batched.wall) / median(figures.alone.wall)).toFixed(2)}`);
    console.log(`${CALLERS} callers × ${CALLS} calls (eth_getTransactionCount) per round, batches of at most ${DEFAULT_RPC_BATCH}, ${ROUNDS} rounds per side, interleaved`);
    for (const a of Object.values(sides)) a.provider.destroy();
  } finally {
    await node.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
