/**
 * Two Solana endpoints, each a proxy in front of the same live surfnet: one freezes its head (a node stuck
 * while still answering) while the other passes. The frozen endpoint is taken out of reads with a log line
 * and a metric, the watcher's reading goes on through the other one (a SOL and an SPL deposit made after the
 * freeze are found, and no block is asked of the frozen endpoint meanwhile), and the endpoint comes back
 * once its head moves again. The EVM and UTXO version of this is endpoint-failover.test.ts.
 */
import { createAssociatedTokenAccountIdempotentInstruction, createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Keypair, PublicKey, SystemProgram } from '@solana/web3.js';
import type { Cursor, ObservedDeposit } from '../../src/chains/adapter';
import { sendAndPoll, startSurfnet, type SurfnetDevnet } from '../../devnet/surfnet';
import { SolAdapter } from '../../src/chains/sol/adapter';
import { setLogSink, type LogSink } from '../../src/observability/logger';
import { registry } from '../../src/observability/metrics';
import { startHostileRpc, type HostileRpc } from '../helpers/hostile-rpc';
import { testSeed } from '../helpers/nodes';
import { waitFor } from '../helpers/process';

jest.setTimeout(180_000);

// Slots of 100 ms: 20 slots behind is two seconds of a stuck node.
const BOUNDS = { maxLag: 20, stallMs: 1_500, probeMs: 250 };
const network = 'solana';

const lines: string[] = [];
let previousSink: LogSink;
let dev: SurfnetDevnet;
let a: HostileRpc;
let b: HostileRpc;
let adapter: SolAdapter;

beforeAll(async () => {
  previousSink = setLogSink({ write: (l) => { lines.push(l); previousSink.write(l); } });
  dev = await startSurfnet({ slotTimeMs: 100 });
  a = await startHostileRpc({ upstream: dev.rpcUrl, enabled: false });
  b = await startHostileRpc({ upstream: dev.rpcUrl, enabled: false });
  adapter = new SolAdapter({ network, mode: 'regtest', rpcUrl: `${a.url},${b.url}`, seed: testSeed(), tokens: dev.tokens, endpointHealth: BOUNDS });
}, 120_000);
afterAll(async () => {
  await adapter?.close();
  await a?.close();
  await b?.close();
  await dev?.stop();
  setLogSink(previousSink);
});

async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = m?.values.find((x) => Object.entries(labels).every(([k, want]) => String(x.labels[k]) === want));
  return v?.value;
}

const logged = (msg: string, endpoint: string) =>
  lines.some((l) => {
    const o = JSON.parse(l) as { msg?: string; network?: string; endpoint?: string };
    return o.msg === msg && o.network === network && o.endpoint === endpoint;
  });

test('a frozen endpoint is taken out (log, metric), deposits after the freeze are found through the other, and it comes back', async () => {
  await waitFor(async () => (await metric('gateway_rpc_healthy_endpoints', { network })) === 2 && (await metric('gateway_rpc_endpoint_head', { network, endpoint: '0' })) !== undefined, 20_000, 'both endpoints probed');
  const removalsBefore = (await metric('gateway_rpc_endpoint_removals_total', { network, endpoint: '0' })) ?? 0;
  a.freezeHead();
  const before: Cursor = await adapter.head();
  await waitFor(async () => (await metric('gateway_rpc_endpoint_healthy', { network, endpoint: '0' })) === 0, 20_000, 'the frozen endpoint taken out');
  expect(logged('rpc endpoint taken out of reads', '0')).toBe(true);
  expect(await metric('gateway_rpc_endpoint_healthy', { network, endpoint: '1' })).toBe(1);
  expect(await metric('gateway_rpc_healthy_endpoints', { network })).toBe(1);
  expect(((await metric('gateway_rpc_endpoint_removals_total', { network, endpoint: '0' })) ?? 0) - removalsBefore).toBe(1);
  const heads = [await metric('gateway_rpc_endpoint_head', { network, endpoint: '0' }), await metric('gateway_rpc_endpoint_head', { network, endpoint: '1' })];
  // Behind the other, and out for it: past the lag bound, or behind and not moving for the stall bound.
  expect(heads[1]!).toBeGreaterThan(heads[0]!);

  // A SOL and an SPL deposit after the freeze, in slots the frozen endpoint never shows as its head.
  const customer = Keypair.fromSecretKey(Uint8Array.from(dev.customerSecret));
  const mint = new PublicKey(dev.tokens.sol_usdc);
  const [solTo, splTo] = [adapter.deriveAddressIn(7n), adapter.deriveAddressIn(8n)];
  const ata = getAssociatedTokenAddressSync(mint, new PublicKey(splTo));
  const solTx = await sendAndPoll(dev.connection, [SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: new PublicKey(solTo), lamports: 2_000_000_000n })], [customer]);
  const splTx = await sendAndPoll(
    dev.connection,
    [
      createAssociatedTokenAccountIdempotentInstruction(customer.publicKey, ata, new PublicKey(splTo), mint),
      createTransferCheckedInstruction(getAssociatedTokenAddressSync(mint, customer.publicKey), mint, ata, customer.publicKey, 7_000_000n, 6),
    ],
    [customer],
  );
  // Read as the watcher reads: only the transactions naming a watched address are parsed.
  const watched = new Set([solTo, splTo]);
  const list = [...watched];
  const scope = { watched: true, watchedAddresses: async () => list };
  const blocksAskedOfFrozen = a.calls('getBlock');
  let cursor = before;
  const found: ObservedDeposit[] = [];
  await waitFor(async () => {
    const batch = await adapter.scan(cursor, 100, scope);
    cursor = batch.cursor;
    for (const blk of batch.blocks) for (const d of blk.deposits) if (watched.has(d.recipient) && (blk.confirm?.(d) ?? true)) found.push(d);
    return found.length >= 2;
  }, 60_000, 'the deposits made after the freeze');
  expect(found.map((d) => [d.txid, d.ticker, d.recipient, d.amount])).toEqual([
    [solTx, 'sol', solTo, 2_000_000_000n],
    [splTx, 'sol_usdc', splTo, 7_000_000n],
  ]);
  expect(a.calls('getBlock') - blocksAskedOfFrozen).toBe(0);

  a.thaw();
  await waitFor(async () => (await metric('gateway_rpc_endpoint_healthy', { network, endpoint: '0' })) === 1, 20_000, 'the endpoint back in');
  expect(logged('rpc endpoint back in reads', '0')).toBe(true);
  expect(await metric('gateway_rpc_healthy_endpoints', { network })).toBe(2);
});
