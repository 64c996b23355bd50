/**
 * Which call-trace API the EVM watcher reads, through a proxy in front of a live anvil that answers
 * "method not found" for a namespace the node is taken not to serve: the Parity-style trace_block when the
 * debug namespace is off (the same deposits, the same keys), nothing when both are off (said once, by a
 * log line and gateway_evm_tracing, and top-level deposits found as before), and one trace call per block
 * only once an address of the network is watched.
 */
import { Wallet, parseEther, type Contract } from 'ethers';
import { depositKey } from '../../src/chains/adapter';
import { EvmAdapter } from '../../src/chains/evm/adapter';
import { INTERNAL_INDEX_BASE } from '../../src/chains/evm/internal-transfers';
import { paymentConfigs } from '../../src/db/schema';
import { readCursor, scanOnce } from '../../src/detection/watcher';
import { setLogSink } from '../../src/observability/logger';
import { evmTracing } from '../../src/observability/metrics';
import { anvilWatchBed, type AnvilWatchBed } from '../helpers/anvil-watch';
import { createTestDatabase } from '../helpers/db';
import { startHostileRpc, type HostileRpc } from '../helpers/hostile-rpc';
import { testSeed } from '../helpers/nodes';
import { deployPayer } from '../helpers/payer-contracts';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(180_000);

let bed: AnvilWatchBed;
let customer: Wallet;
let payer: Contract;
const seed = testSeed();
const closing: Array<() => Promise<void>> = [];

beforeAll(async () => {
  bed = await anvilWatchBed('gw-trace-api-');
  customer = new Wallet(bed.node.customerKey, bed.provider);
  payer = await deployPayer(customer);
});
afterAll(async () => {
  for (const c of closing.reverse()) await c();
  await bed?.close();
});

/** An adapter reading anvil through a proxy that refuses the methods `refuse` names; `asked` lists every method sent. */
async function adapterBehind(refuse: RegExp, refusal?: { code: number; message: string }): Promise<{ adapter: EvmAdapter; asked: string[]; proxy: HostileRpc }> {
  const asked: string[] = [];
  const proxy = await startHostileRpc({
    upstream: bed.node.rpcUrl, enabled: false,
    refuse: (m) => (asked.push(m), refuse.test(m)),
    refusal: refusal ? () => refusal : undefined,
  });
  const adapter = new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: proxy.url, rpcBatch: 1, chainId: bed.node.chainId, seed, tokens: bed.node.tokens });
  closing.push(() => proxy.close(), () => adapter.close());
  return { adapter, asked, proxy };
}

/** Log lines of this process while `fn` runs. */
async function logsDuring(fn: () => Promise<void>): Promise<Array<Record<string, unknown>>> {
  const lines: string[] = [];
  const previous = setLogSink({ write: (l) => void lines.push(l) });
  try {
    await fn();
  } finally {
    setLogSink(previous);
  }
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

const tracing = async () => (await evmTracing.get()).values.find((v) => v.labels.network === 'ethereum')?.value;

test('trace_block and the callTracer (a node without the trace namespace) give the same deposits with the same keys', async () => {
  const { adapter: direct } = await adapterBehind(/^trace_/);
  const { adapter } = await adapterBehind(/^debug_/);
  const [a, b] = [direct.deriveAddressIn(1n), direct.deriveAddressIn(2n)];
  const tx = await payer.getFunction('payOneRevertOthers')(a, b, 5_000n, 7_000n, { value: 19_000n });
  const batch = await payer.getFunction('batch')([a, b], [1_000n, 2_000n], { value: 3_000n });
  const heights = [(await tx.wait()).blockNumber, (await batch.wait()).blockNumber].map(BigInt);
  let logs: Array<Record<string, unknown>> = [];
  for (const h of heights) {
    const viaDebug = await direct.scanBlock(h);
    let viaTrace!: Awaited<ReturnType<EvmAdapter['scanBlock']>>;
    logs = logs.concat(await logsDuring(async () => void (viaTrace = await adapter.scanBlock(h))));
    expect(viaTrace.deposits.map(depositKey)).toEqual(viaDebug.deposits.map(depositKey));
    expect(viaTrace.deposits.map((d) => [d.recipient, d.amount])).toEqual(viaDebug.deposits.map((d) => [d.recipient, d.amount]));
  }
  const internal = (await direct.scanBlock(heights[1])).deposits.filter((d) => d.index >= INTERNAL_INDEX_BASE);
  expect(internal.map((d) => [d.index, d.recipient, d.amount])).toEqual([
    [INTERNAL_INDEX_BASE, a, 1_000n],
    [INTERNAL_INDEX_BASE + 1, b, 2_000n],
  ]);
  expect(logs.filter((l) => l.api === 'trace')).toHaveLength(1);
  expect(await tracing()).toBe(1);
});

test('a trace_block refused in other words (a provider\'s plan): the callTracer is read', async () => {
  const { adapter, asked } = await adapterBehind(/^trace_/, { code: -32000, message: 'trace_block is not available on your plan' });
  const head = BigInt(await bed.provider.getBlockNumber());
  const logs = await logsDuring(async () => void (await adapter.scanBlock(head)));
  expect(logs.filter((l) => l.api === 'debug')).toHaveLength(1);
  expect(asked).toContain('trace_block');
  expect(asked).toContain('debug_traceBlockByNumber');
});

describe.each([
  ['geth\'s words', undefined],
  ['another node\'s words, by its code', { code: -32601, message: 'Method not found' }],
])('a node without tracing (%s)', (_name, refusal) => {
  test('is said once at the start (one log line, gateway_evm_tracing 0); top-level deposits are found as before', async () => {
    const { adapter } = await adapterBehind(/^(debug|trace)_/, refusal);
    const a = adapter.deriveAddressIn(3n);
    let start!: Awaited<ReturnType<EvmAdapter['scan']>>;
    const logs = await logsDuring(async () => {
      start = await adapter.scan(null);
      for (let i = 0; i < 3; i++) await adapter.scan(start.cursor);
    });
    const said = logs.filter((l) => l.level === 40 && l.network === 'ethereum' && /call traces/.test(String(l.msg)));
    expect(said).toHaveLength(1);
    expect(await tracing()).toBe(0);
    const direct = await customer.sendTransaction({ to: a, value: parseEther('0.01') });
    await direct.wait();
    const byContract = await payer.getFunction('forward')(a, { value: 4_000n });
    await byContract.wait();
    const batch = await logsDuring(async () => void (start = await adapter.scan(start.cursor)));
    expect(batch).toEqual([]);
    // The contract's own top-level receipt of 4,000 wei is a candidate too (to the Payer): address_in's alone here.
    const found = start.blocks.flatMap((blk) => blk.deposits).filter((d) => d.recipient === a);
    expect(found.map((d) => [d.txid, d.index, d.amount])).toEqual([[direct.hash, -1, parseEther('0.01')]]);
  });
});

test('one trace call per block once an address is watched, none before (beyond the probe at the start); trace_block where both are served', async () => {
  const { adapter, asked } = await adapterBehind(/^$/);
  const db = bed.db;
  const traces = () => asked.filter((m) => m === 'trace_block').length;
  await scanOnce(adapter, db, 'ethereum'); // first pass: the cursor at the head, the probe
  expect(traces()).toBe(1);
  for (let i = 0; i < 3; i++) await (await customer.sendTransaction({ to: Wallet.createRandom().address, value: 1n })).wait();
  await scanOnce(adapter, db, 'ethereum');
  expect(traces()).toBe(1);
  await db.insert(paymentConfigs).values({
    ...callbackColumns('https://shop.example/trace-cost'), ticker: 'eth', family: 'evm', addressIn: adapter.deriveAddressIn(9n),
    addressOut: Wallet.createRandom().address, derivationIndex: 9n, notifyPending: false, notifyConfirmations: 1,
    post: 0, json: 0, convert: 0, priority: 'default',
  });
  const before = await bed.provider.getBlockNumber();
  for (let i = 0; i < 3; i++) await (await customer.sendTransaction({ to: Wallet.createRandom().address, value: 1n })).wait();
  const after = await bed.provider.getBlockNumber();
  const traced = traces();
  await scanOnce(adapter, db, 'ethereum');
  expect(traces() - traced).toBe(after - before);
  // Per block, never per transaction; the callTracer never asked of a node that serves trace_block.
  expect(asked.filter((m) => m === 'debug_traceTransaction' || m === 'eth_getTransactionReceipt' || m.startsWith('debug_'))).toEqual([]);
});

test('a configuration made and paid while a pass read its blocks without traces: nothing kept, the next pass reads them with traces', async () => {
  const database = await createTestDatabase();
  closing.push(() => database.drop());
  const db = database.db;
  const adapter = new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: bed.node.rpcUrl, chainId: bed.node.chainId, seed, tokens: bed.node.tokens });
  closing.push(() => adapter.close());
  await scanOnce(adapter, db, 'ethereum'); // the cursor at the head; nothing watched
  const addressIn = adapter.deriveAddressIn(21n);
  let txid = '';
  // The pass asked whether anything is watched (no); then, before it reads the head, a configuration is
  // made and paid by a contract.
  const scan = adapter.scan.bind(adapter);
  jest.spyOn(adapter, 'scan').mockImplementationOnce(async (...args) => {
    await db.insert(paymentConfigs).values({
      ...callbackColumns('https://shop.example/made-during-a-pass'), ticker: 'eth', family: 'evm', addressIn,
      addressOut: Wallet.createRandom().address, derivationIndex: 21n, notifyPending: false, notifyConfirmations: 1,
      post: 0, json: 0, convert: 0, priority: 'default',
    });
    const tx = await payer.getFunction('forward')(addressIn, { value: 21_000n });
    txid = tx.hash as string;
    await tx.wait();
    return scan(...args);
  });
  const before = await readCursor(db, 'ethereum');
  expect(await scanOnce(adapter, db, 'ethereum')).toEqual([]);
  expect(await readCursor(db, 'ethereum')).toEqual(before);
  const matched = await scanOnce(adapter, db, 'ethereum');
  expect(matched.map((m) => [m.deposit.txid, m.deposit.index, m.deposit.recipient, m.deposit.amount])).toEqual([[txid, INTERNAL_INDEX_BASE, addressIn, 21_000n]]);
});
