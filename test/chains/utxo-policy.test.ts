/**
 * A UTXO forward within what the node relays, on real nodes (litecoind 0.21 and Bitcoin Knots in regtest),
 * counted on chain: a commission below the node's dust threshold goes to the miner instead of blocking the
 * forward; a fee estimate of -1 and a raised relay minimum never make a forward the node refuses; bytes the
 * node refuses for its policy while the deposit is unspent are replaceable, and the new plan spends the
 * same outpoint (one payout).
 */
import { Transaction } from 'bitcoinjs-lib';
import { BroadcastRejectedError, type ForwardPlan, type ObservedDeposit } from '../../src/chains/adapter';
import { bitcoinNode, litecoinNode, type NodeCommand } from '../../devnet/binaries';
import { startCoreNode, type CoreDevnet } from '../../devnet/core-node';
import type { HdSeed } from '../../src/chains/keys';
import { UtxoAdapter } from '../../src/chains/utxo/adapter';
import { forwardVsize } from '../../src/chains/utxo/forward';
import { BitcoinRpc, fromSats, toSats } from '../../src/chains/utxo/rpc';
import { startHostileRpc, type HostileRpc } from '../helpers/hostile-rpc';
import { testSeed, tmpDir } from '../helpers/nodes';

type Coin = 'ltc' | 'btc';
const NETWORK = { ltc: 'litecoin', btc: 'bitcoin' } as const;

function command(coin: Coin, args: string[]): NodeCommand {
  const cmd = coin === 'ltc' ? litecoinNode() : bitcoinNode();
  if (!cmd || cmd.family !== 'core') throw new Error(`no local ${coin} Core-family node: npm run devnet -- install (.ci/run runs it)`);
  return { ...cmd, nodeArgs: [...(cmd.nodeArgs ?? []), ...args] };
}

/** A litecoind or Knots node in regtest with extra policy options; started again on the same datadir by `restart`. */
async function startNode(coin: Coin, args: string[], dir = tmpDir(`gw-policy-${coin}-`)): Promise<CoreDevnet & { dir: string; coin: Coin }> {
  const dev = await startCoreNode({ dir, cmd: command(coin, args), extraArgs: coin === 'ltc' ? ['-upnp=0'] : [] });
  return { ...dev, dir, coin };
}

const running: Array<{ stop(): Promise<void> }> = [];
afterAll(async () => {
  for (const r of running.reverse()) await r.stop().catch(() => undefined);
});

async function node(coin: Coin, args: string[] = []) {
  const dev = await startNode(coin, args);
  running.push(dev);
  return dev;
}

/** The customer pays `amount` to address_in #index and one block mines it: the deposit as the watcher sees it. */
async function deposit(dev: CoreDevnet, adapter: UtxoAdapter, coin: Coin, amount: bigint, index = 0n): Promise<ObservedDeposit> {
  const rpc = new BitcoinRpc(dev.rpcUrl);
  const to = adapter.deriveAddressIn(index);
  const txid = await new BitcoinRpc(dev.walletUrl).call<string>('sendtoaddress', [to, fromSats(amount)]);
  const [blockHash] = await rpc.call<string[]>('generatetoaddress', [1, dev.minerAddress]);
  const tx = await rpc.call<{ vout: Array<{ n: number; scriptPubKey: { address?: string; addresses?: string[] } }> }>('getrawtransaction', [txid, true]);
  const out = tx.vout.find((v) => (v.scriptPubKey.address ?? v.scriptPubKey.addresses?.[0]) === to)!;
  const height = await rpc.call<number>('getblockcount');
  return { network: NETWORK[coin], ticker: coin, txid, index: out.n, recipient: to, amount, blockNumber: BigInt(height), blockHash };
}

const newAddress = (dev: CoreDevnet) => new BitcoinRpc(dev.walletUrl).call<string>('getnewaddress', ['', 'bech32']);

/** What the chain holds at an address (the UTXO set, mined only). */
async function balance(dev: CoreDevnet, address: string): Promise<bigint> {
  const r = await new BitcoinRpc(dev.rpcUrl).call<{ total_amount: string }>('scantxoutset', ['start', [`addr(${address})`]]);
  return toSats(r.total_amount);
}

async function mine(dev: CoreDevnet, n = 1) {
  await new BitcoinRpc(dev.rpcUrl).call('generatetoaddress', [n, dev.minerAddress]);
}

function forward(adapter: UtxoAdapter, d: ObservedDeposit, addressOut: string, commission: bigint, treasuryAddress: string) {
  return adapter.prepareForward({ deposit: d, derivationIndex: 0n, addressOut, priority: 'default', commission, treasuryAddress });
}

const outputsOf = (plan: ForwardPlan) => Transaction.fromHex(plan.txs[plan.txs.length - 1].raw).outs.map((o) => BigInt(o.value));

/** Sends, mines and checks the chain: address_out got `forwarded`, the treasury `toTreasury`, the rest went to the miner. */
async function landsAsPlanned(dev: CoreDevnet, adapter: UtxoAdapter, plan: ForwardPlan, d: ObservedDeposit, o: { addressOut: string; treasury: string; toTreasury: bigint }) {
  await adapter.broadcast(plan);
  await mine(dev);
  expect(await adapter.forwardStatus(plan)).toMatchObject({ status: 'confirmed' });
  expect(await balance(dev, o.addressOut)).toBe(plan.forwarded);
  expect(await balance(dev, o.treasury)).toBe(o.toTreasury);
  expect(plan.forwarded + plan.networkFee + o.toTreasury).toBe(d.amount);
}

describe('a commission below the node\'s dust threshold goes to the miner', () => {
  let seed: HdSeed;
  beforeAll(() => {
    seed = testSeed();
  });

  it('litecoind: 1 % of the 0.001 LTC floor (1000 lit, dust by Litecoin Core 0.21\'s 30 000 lit/kvB rule) is forwarded without a commission output', async () => {
    const dev = await node('ltc');
    const adapter = new UtxoAdapter({ network: 'litecoin', mode: 'regtest', rpcUrl: dev.rpcUrl, seed });
    // The published minimum's inputs: the forward of two outputs, and the dust threshold of any address_out (P2PKH, 182 bytes × 30).
    expect(await adapter.estimateForwardCost('ltc', 'default')).toEqual({ networkFee: 20n * forwardVsize(true, 2), sponsorCost: 0n, payoutFloor: 5460n });
    const d = await deposit(dev, adapter, 'ltc', 100_000n);
    const [addressOut, treasury] = [await newAddress(dev), await newAddress(dev)];
    const plan = await forward(adapter, d, addressOut, 1000n, treasury);
    expect(outputsOf(plan)).toEqual([plan.forwarded]);
    // The commission is withheld all the same: deposit − fee − commission reaches address_out.
    const vsize = BigInt(Transaction.fromHex(plan.txs[0].raw).virtualSize());
    expect(plan.networkFee - 1000n).toBeGreaterThanOrEqual(20n * vsize);
    expect(plan.networkFee - 1000n).toBeLessThanOrEqual(20n * (vsize + 2n));
    await landsAsPlanned(dev, adapter, plan, d, { addressOut, treasury, toTreasury: 0n });
  }, 120_000);

  it('litecoind: a commission at its dust threshold (2940 lit to P2WPKH) keeps its output', async () => {
    const dev = await node('ltc');
    const adapter = new UtxoAdapter({ network: 'litecoin', mode: 'regtest', rpcUrl: dev.rpcUrl, seed });
    const d = await deposit(dev, adapter, 'ltc', 300_000n);
    const [addressOut, treasury] = [await newAddress(dev), await newAddress(dev)];
    const plan = await forward(adapter, d, addressOut, 2940n, treasury);
    expect(outputsOf(plan)).toEqual([plan.forwarded, 2940n]);
    await landsAsPlanned(dev, adapter, plan, d, { addressOut, treasury, toTreasury: 2940n });
  }, 120_000);

  it('litecoind -dustrelayfee=0.001 (a rule getmempoolinfo does not tell): its refusal before storing sends the commission to the miner', async () => {
    // P2WPKH dust at 100 000 lit/kvB: 9800 lit. The known rule (2940) would give the 5000 lit commission an output.
    const dev = await node('ltc', ['-dustrelayfee=0.001']);
    const adapter = new UtxoAdapter({ network: 'litecoin', mode: 'regtest', rpcUrl: dev.rpcUrl, seed });
    const d = await deposit(dev, adapter, 'ltc', 500_000n);
    const [addressOut, treasury] = [await newAddress(dev), await newAddress(dev)];
    const plan = await forward(adapter, d, addressOut, 5000n, treasury);
    expect(outputsOf(plan)).toEqual([plan.forwarded]);
    await landsAsPlanned(dev, adapter, plan, d, { addressOut, treasury, toTreasury: 0n });
  }, 120_000);

  it('Knots -dustrelayfee=0.0001 (told by getmempoolinfo): 600 sat goes to the miner, 1000 sat to the treasury', async () => {
    const dev = await node('btc', ['-dustrelayfee=0.0001']);
    const adapter = new UtxoAdapter({ network: 'bitcoin', mode: 'regtest', rpcUrl: dev.rpcUrl, seed });
    expect((await adapter.estimateForwardCost('btc', 'default')).payoutFloor).toBe(1820n); // P2PKH: 182 bytes × 10
    const [addressOut, treasury] = [await newAddress(dev), await newAddress(dev)];
    const small = await deposit(dev, adapter, 'btc', 100_000n);
    const a = await forward(adapter, small, addressOut, 600n, treasury);
    expect(outputsOf(a)).toEqual([a.forwarded]);
    await landsAsPlanned(dev, adapter, a, small, { addressOut, treasury, toTreasury: 0n });

    const [out2, treasury2] = [await newAddress(dev), await newAddress(dev)];
    const big = await deposit(dev, adapter, 'btc', 100_000n, 1n);
    const b = await adapter.prepareForward({ deposit: big, derivationIndex: 1n, addressOut: out2, priority: 'default', commission: 1000n, treasuryAddress: treasury2 });
    expect(outputsOf(b)).toEqual([b.forwarded, 1000n]);
    await landsAsPlanned(dev, adapter, b, big, { addressOut: out2, treasury: treasury2, toTreasury: 1000n });
  }, 120_000);
});

describe('fee rate: never below what the node relays', () => {
  let proxy: HostileRpc | undefined;
  afterAll(async () => {
    await proxy?.close();
  });

  it('litecoind -minrelaytxfee=0.0005 behind a proxy answering estimatesmartfee with feerate -1: signed at ≥ 50 lit/vB, taken and mined', async () => {
    const dev = await node('ltc', ['-minrelaytxfee=0.0005']);
    proxy = await startHostileRpc({ upstream: dev.rpcUrl, enabled: false, negativeFeeEstimate: true });
    expect(await new BitcoinRpc(proxy.url).call('estimatesmartfee', [6])).toEqual({ feerate: '-1', blocks: 0 });
    const seed = testSeed();
    const adapter = new UtxoAdapter({ network: 'litecoin', mode: 'regtest', rpcUrl: proxy.url, seed });
    expect((await adapter.estimateForwardCost('ltc', 'default')).networkFee).toBe(50n * forwardVsize(true, 2));
    const d = await deposit(dev, adapter, 'ltc', 1_000_000n);
    const [addressOut, treasury] = [await newAddress(dev), await newAddress(dev)];
    const plan = await forward(adapter, d, addressOut, 10_000n, treasury);
    const vsize = BigInt(Transaction.fromHex(plan.txs[0].raw).virtualSize());
    expect(plan.networkFee).toBeGreaterThanOrEqual(50n * vsize);
    await landsAsPlanned(dev, adapter, plan, d, { addressOut, treasury, toTreasury: 10_000n });
  }, 120_000);
});

describe('a forward the node refuses for its policy is replaceable, and the new plan spends the same outpoint', () => {
  it('signed at 1 lit/vB, the node restarted with -minrelaytxfee=0.0001: replaceable on two heights, re-signed at 10 lit/vB, one payout on chain', async () => {
    const seed = testSeed();
    const first = await startNode('ltc', []);
    let dev: CoreDevnet = first;
    running.push({ stop: () => dev.stop() });
    const cheap = new UtxoAdapter({ network: 'litecoin', mode: 'regtest', rpcUrl: first.rpcUrl, seed, fallbackFeeRate: 1n });
    const d = await deposit(first, cheap, 'ltc', 1_000_000n);
    const [addressOut, treasury] = [await newAddress(first), await newAddress(first)];
    const old = await forward(cheap, d, addressOut, 10_000n, treasury);
    await first.stop();

    dev = await startNode('ltc', ['-minrelaytxfee=0.0001'], first.dir);
    const adapter = new UtxoAdapter({ network: 'litecoin', mode: 'regtest', rpcUrl: dev.rpcUrl, seed, fallbackFeeRate: 1n });
    await expect(adapter.broadcast(old)).rejects.toBeInstanceOf(BroadcastRejectedError);
    const r1 = await adapter.forwardStatus(old);
    expect(r1).toMatchObject({ status: 'replaceable', reason: expect.stringContaining('min relay fee not met') });
    await mine(dev);
    const r2 = await adapter.forwardStatus(old);
    expect(r2.status).toBe('replaceable');
    if (r1.status !== 'replaceable' || r2.status !== 'replaceable') throw new Error('not replaceable');
    expect(r2.observedAt).toBeGreaterThan(r1.observedAt);

    const renewed = await forward(adapter, d, addressOut, 10_000n, treasury);
    expect(renewed.txidOut).not.toBe(old.txidOut);
    const inputOf = (p: ForwardPlan) => Transaction.fromHex(p.txs[0].raw).ins.map((i) => `${Buffer.from(i.hash).reverse().toString('hex')}:${i.index}`);
    expect(inputOf(renewed)).toEqual(inputOf(old));
    expect(renewed.networkFee).toBeGreaterThanOrEqual(10n * BigInt(Transaction.fromHex(renewed.txs[0].raw).virtualSize()));
    await landsAsPlanned(dev, adapter, renewed, d, { addressOut, treasury, toTreasury: 10_000n });
    // The old bytes can never land now; they are neither replaceable nor sent with effect.
    expect(await adapter.forwardStatus(old)).toEqual({ status: 'pending', known: false });
    await expect(adapter.broadcast(old)).rejects.toBeInstanceOf(BroadcastRejectedError);
    await mine(dev);
    expect(await balance(dev, addressOut)).toBe(renewed.forwarded);
    expect(await balance(dev, treasury)).toBe(10_000n);
  }, 180_000);

  it('behind a proxy that denies every transaction and refuses every broadcast, a forward the node took or mined is never replaceable', async () => {
    const dev = await node('ltc', ['-minrelaytxfee=0.0001']);
    const liar = await startHostileRpc({ upstream: dev.rpcUrl, probabilities: { staleHead: 0, drop: 0, nullReceipt: 1, broadcastError: 1 } });
    running.push({ stop: () => liar.close() });
    const seed = testSeed();
    const direct = new UtxoAdapter({ network: 'litecoin', mode: 'regtest', rpcUrl: dev.rpcUrl, seed });
    const lying = new UtxoAdapter({ network: 'litecoin', mode: 'regtest', rpcUrl: liar.url, seed });
    const d = await deposit(dev, direct, 'ltc', 1_000_000n);
    const [addressOut, treasury] = [await newAddress(dev), await newAddress(dev)];
    const plan = await forward(direct, d, addressOut, 10_000n, treasury);
    // Relayed, then answered with an error; the node holds it, the liar says it knows no such transaction.
    await expect(lying.broadcast(plan)).rejects.toBeInstanceOf(BroadcastRejectedError);
    expect(await lying.forwardStatus(plan)).toEqual({ status: 'pending', known: false });
    await mine(dev);
    expect(await lying.forwardStatus(plan)).toEqual({ status: 'pending', known: false });
    expect(await direct.forwardStatus(plan)).toMatchObject({ status: 'confirmed' });
    expect(liar.stats().faults.nullReceipt).toBeGreaterThan(0);
    expect(await balance(dev, addressOut)).toBe(plan.forwarded);
  }, 120_000);

  it('bytes the node takes are not replaceable: a forward out of the mempool is re-sent as stored', async () => {
    const dev = await node('ltc');
    const seed = testSeed();
    const adapter = new UtxoAdapter({ network: 'litecoin', mode: 'regtest', rpcUrl: dev.rpcUrl, seed });
    const d = await deposit(dev, adapter, 'ltc', 1_000_000n);
    const plan = await forward(adapter, d, await newAddress(dev), 10_000n, await newAddress(dev));
    expect(await adapter.forwardStatus(plan)).toEqual({ status: 'pending', known: false });
  }, 120_000);
});
