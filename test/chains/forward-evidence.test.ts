import { Keypair } from '@solana/web3.js';
import { Wallet, parseEther } from 'ethers';
import type { ForwardPlan, ObservedDeposit } from '../../src/chains/adapter';
import { EvmAdapter } from '../../src/chains/evm/adapter';
import { SolAdapter } from '../../src/chains/sol/adapter';
import { startHostileRpc, type HostileRpc } from '../helpers/hostile-rpc';
import { anvilChain, surfnetChain, testSeed, type LiveChain } from '../helpers/nodes';
import { waitFor } from '../helpers/process';

/**
 * A stored forward is replaced only on evidence final by the chain's own rule, never on one node's word:
 * behind a proxy that answers "no such transaction" for everything mined, a landed forward never reads
 * as replaceable, while bytes that truly can never land do (EVM: our own rival final at the nonce;
 * Solana: the blockhash expired in finalized history and the transaction in none).
 */
jest.setTimeout(120_000);

async function depositTo(chain: LiveChain, index: bigint, amount: bigint): Promise<ObservedDeposit> {
  const to = chain.adapter.deriveAddressIn(index);
  const from = await chain.adapter.head();
  const txid = await chain.pay(to, amount);
  let found: ObservedDeposit | undefined;
  await waitFor(async () => {
    const batch = await chain.adapter.scan(from, 500);
    found = batch.blocks.flatMap((b) => b.deposits).find((x) => x.txid === txid && x.recipient === to && x.ticker === chain.ticker);
    return found !== undefined;
  }, 30_000, 'deposit scanned');
  return found!;
}

describe('EVM behind a node that denies mined transactions', () => {
  const seed = testSeed();
  let chain: LiveChain;
  let proxy: HostileRpc;
  let lying: EvmAdapter;
  beforeAll(async () => {
    chain = await anvilChain('eth', seed);
    const direct = chain.adapter as EvmAdapter;
    proxy = await startHostileRpc({ upstream: direct.provider._getConnection().url, probabilities: { staleHead: 0, drop: 0, nullReceipt: 1, broadcastError: 0 } });
    lying = new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: proxy.url, chainId: (await direct.provider.getNetwork()).chainId, seed, tokens: {}, finalityDepth: 12 });
  });
  afterAll(async () => {
    await lying?.close();
    await proxy?.close();
    await chain?.stop();
  });

  it('a mined forward whose receipt reads null, nonce used and final, is pending: never replaceable', async () => {
    const d = await depositTo(chain, 31n, parseEther('1'));
    const plan = await chain.adapter.prepareForward({ deposit: d, derivationIndex: 31n, addressOut: Wallet.createRandom().address, priority: 'default' });
    await chain.adapter.broadcast(plan);
    await chain.mine(15);
    expect((await chain.adapter.forwardStatus(plan)).status).toBe('confirmed');
    const reading = await lying.forwardStatus(plan, { rivals: [] });
    expect(reading).toMatchObject({ status: 'pending', known: false });
    expect(proxy.stats().faults.nullReceipt).toBeGreaterThan(0);
  });

  it('a rival of ours final at the nonce makes the loser replaceable even through the liar (a receipt is never invented)', async () => {
    const d1 = await depositTo(chain, 32n, parseEther('1'));
    const d2 = await depositTo(chain, 32n, parseEther('1.5'));
    const out = Wallet.createRandom().address;
    const winner = await chain.adapter.prepareForward({ deposit: d1, derivationIndex: 32n, addressOut: out, priority: 'default' });
    const loser = await chain.adapter.prepareForward({ deposit: d2, derivationIndex: 32n, addressOut: out, priority: 'default' });
    await chain.adapter.broadcast(winner);
    await chain.mine(15);
    // Through the liar the rival's receipt is hidden too: no evidence, so no replacement.
    expect((await lying.forwardStatus(loser, { rivals: [winner.txidOut] })).status).toBe('pending');
    // An honest node shows the rival final: now the loser's bytes can never land.
    expect(await chain.adapter.forwardStatus(loser, { rivals: [winner.txidOut] })).toMatchObject({ status: 'replaceable' });
  });
});

describe('Solana behind a node that denies landed transactions', () => {
  const seed = testSeed();
  let chain: LiveChain;
  let proxy: HostileRpc;
  let lying: SolAdapter;
  beforeAll(async () => {
    chain = await surfnetChain('sol', seed);
    const direct = chain.adapter as SolAdapter;
    proxy = await startHostileRpc({ upstream: direct.connection.rpcEndpoint, probabilities: { staleHead: 0, drop: 0, nullReceipt: 1, broadcastError: 0 } });
    lying = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: proxy.url, seed, tokens: {} });
  });
  afterAll(async () => {
    await lying?.close();
    await proxy?.close();
    await chain?.stop();
  });

  async function expired(plan: ForwardPlan) {
    const direct = chain.adapter as SolAdapter;
    await waitFor(async () => BigInt(await direct.connection.getBlockHeight('finalized')) > BigInt(plan.lastValidBlockHeight!), 90_000, 'blockhash expired in finalized history');
  }

  it('a landed forward reads pending through the liar after its blockhash expired, never replaceable', async () => {
    const d = await depositTo(chain, 41n, 2_000_000_000n);
    const plan = await chain.adapter.prepareForward({ deposit: d, derivationIndex: 41n, addressOut: Keypair.generate().publicKey.toBase58(), priority: 'default' });
    expect(plan.lastValidBlockHeight).toBeDefined();
    await chain.adapter.broadcast(plan);
    await waitFor(async () => (await chain.adapter.forwardStatus(plan)).status === 'confirmed', 30_000, 'forward landed');
    await expired(plan);
    expect(await lying.forwardStatus(plan)).toMatchObject({ status: 'pending' });
    expect(proxy.stats().faults.nullReceipt).toBeGreaterThan(0);
  });

  it('bytes never sent are replaceable once their blockhash expired in finalized history', async () => {
    const d = await depositTo(chain, 42n, 2_000_000_000n);
    const plan = await chain.adapter.prepareForward({ deposit: d, derivationIndex: 42n, addressOut: Keypair.generate().publicKey.toBase58(), priority: 'default' });
    expect(await chain.adapter.forwardStatus(plan)).toEqual({ status: 'pending', known: false });
    await expired(plan);
    expect(await chain.adapter.forwardStatus(plan)).toMatchObject({ status: 'replaceable' });
  });
});
