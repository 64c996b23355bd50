/**
 * `npm run admin -- sweep` end to end (scripts/admin.ts): the command runs the `sweep` workflow on a worker
 * (the Temporal dev server, the real PostgreSQL, anvil), prints the dry run's rows and totals, moves the
 * selection with --execute and prints each move; run again, it sends nothing. Bad command lines are refused
 * before anything is sent.
 */
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { parseEther } from 'ethers';
import { formatUnits } from '../../src/domain/money';
import { createSweepActivities } from '../../activities/sweep';
import { runAdmin } from '../../scripts/admin';
import { parseSweep } from '../../scripts/sweep-cli';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { createTestDatabase } from '../helpers/db';
import { anvilChain, testSeed, tmpDir, type LiveChain } from '../helpers/nodes';
import { withEnv } from '../helpers/process';
import { sweepBench } from '../helpers/sweep';
import { createLocalEnv, gatewayWorkflows } from '../helpers/temporal';

jest.setTimeout(180_000);

let env: TestWorkflowEnvironment;
let node: AnvilDevnet;
let chain: LiveChain;
let database: Awaited<ReturnType<typeof createTestDatabase>>;

beforeAll(async () => {
  // The dev server first, alone: started beside the others on a busy machine it can miss its connect deadline.
  env = await createLocalEnv();
  [node, database] = await Promise.all([startAnvil({ dir: tmpDir('gw-sweep-admin-') }), createTestDatabase()]);
  chain = await anvilChain('eth', testSeed(), node);
});

afterAll(async () => {
  await chain?.stop();
  await node?.stop();
  await database?.drop();
  await env?.teardown();
});

test('refuses a bad command line before anything is sent', async () => {
  expect(parseSweep(['--execute', '--ticker', 'eth'])).toMatch(/--execute needs --to treasury or --to address_out/);
  expect(parseSweep(['--execute', '--to', 'treasury'])).toMatch(/--execute needs a selection/);
  expect(parseSweep(['--execute', '--to', 'elsewhere', '--all'])).toMatch(/--to treasury or --to address_out/);
  expect(parseSweep(['--ticker', 'ltc'])).toMatch(/UTXO deposits leave nothing/);
  expect(parseSweep(['--ticker', 'xrp'])).toMatch(/unknown ticker/);
  expect(parseSweep(['--network', 'bitcoin'])).toMatch(/not an account-chain network/);
  expect(parseSweep(['--to', 'treasury'])).toMatch(/go with --execute/);
  expect(parseSweep(['--ticker'])).toMatch(/--ticker needs a value/);
  expect(parseSweep(['--bogus'])).toMatch(/^usage:/);
  expect(parseSweep(['--ticker', 'ETH,erc20_usdt', '--address', '0xabc'])).toEqual({
    input: { execute: false, filter: { tickers: ['eth', 'erc20_usdt'], addresses: ['0xabc'] } },
    json: false,
  });
  const out: string[] = [];
  // Refused before any connection: no Temporal address is needed.
  expect(await withEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1' }, () => runAdmin(['sweep', '--execute'], (l) => out.push(l)))).toBe(2);
  expect(out[0]).toMatch(/--execute needs --to/);
});

test('lists the commission with its total, moves it to the treasury on --execute, and sends nothing when run again', async () => {
  const bench = sweepBench(chain, database);
  const done = await bench.deposit(81n, parseEther('1'));
  await bench.complete(done.uuid);
  await bench.watcherAtHead();
  const left = await chain.balanceOf(done.addressIn);

  const taskQueue = `sweep-admin-${Date.now()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, ...(await gatewayWorkflows()), activities: createSweepActivities(bench.deps) });
  const admin = async (...argv: string[]) => {
    const lines: string[] = [];
    const code = await withEnv({ TEMPORAL_ADDRESS: env.address, TEMPORAL_TASK_QUEUE: taskQueue }, () => runAdmin(['sweep', ...argv], (l) => lines.push(l)));
    return { code, lines };
  };
  await worker.runUntil(async () => {
    const dry = await admin();
    expect(dry).toEqual({
      code: 0,
      lines: [`ethereum  eth  ${done.addressIn}  ${formatUnits(left, 18)} eth  (commission)`, `total ${formatUnits(left, 18)} eth at 1 address`],
    });
    // The dry run moved nothing.
    expect(await chain.balanceOf(done.addressIn)).toBe(left);

    const treasuryBefore = await chain.balanceOf(bench.treasury);
    const moved = await admin('--execute', '--to', 'treasury', '--ticker', 'eth', '--json');
    expect(moved.code).toBe(0);
    const report = JSON.parse(moved.lines.join('\n')) as { moves: Array<{ txid: string; amount: string; status: string; destination: string }> };
    expect(report.moves).toEqual([expect.objectContaining({ status: 'confirmed', destination: bench.treasury })]);
    // No signed bytes in what the workflow returns (its result is in the history).
    expect(moved.lines.join('\n')).not.toMatch(/0x02f8/);
    expect(await chain.balanceOf(bench.treasury)).toBe(treasuryBefore + BigInt(report.moves[0].amount));

    const again = await admin('--execute', '--to', 'treasury', '--ticker', 'eth');
    expect(again.code).toBe(0);
    expect(again.lines[0]).toBe('nothing swept');
    expect(await chain.balanceOf(bench.treasury)).toBe(treasuryBefore + BigInt(report.moves[0].amount));
  });
});
