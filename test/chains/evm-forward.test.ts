/**
 * EVM forwards that race on anvil: token forwards prepared together share the gas tank's nonce and
 * both still land (the fungible top-up is re-signed, the stored forward bytes never change); two ETH
 * forwards from one address_in carry the same nonce, so at most one can ever be mined.
 */
import { Wallet, parseEther } from 'ethers';
import { BroadcastRejectedError, type ObservedDeposit } from '../../src/chains/adapter';
import { anvilChain, testSeed, type LiveChain } from '../helpers/nodes';
import { isAlive } from '../helpers/process';

jest.setTimeout(120_000);

async function depositTo(chain: LiveChain, index: bigint, amount: bigint): Promise<ObservedDeposit> {
  const to = chain.adapter.deriveAddressIn(index);
  const from = await chain.adapter.head();
  const txid = await chain.pay(to, amount);
  const batch = await chain.adapter.scan(from, 100);
  const d = batch.blocks.flatMap((b) => b.deposits).find((x) => x.txid === txid && x.recipient === to && x.ticker === chain.ticker);
  if (!d) throw new Error('deposit not found');
  return d;
}

describe('ERC-20 forwards prepared together', () => {
  let chain: LiveChain;
  beforeAll(async () => {
    chain = await anvilChain('erc20_usdt', testSeed());
  });
  afterAll(async () => {
    await chain?.stop();
    for (const pid of chain?.pids ?? []) expect(isAlive(pid)).toBe(false);
  });

  test('both land although their top-ups were signed with the same gas-tank nonce', async () => {
    const a = await depositTo(chain, 11n, 3_000_000n);
    const b = await depositTo(chain, 12n, 4_000_000n);
    const outA = Wallet.createRandom().address;
    const outB = Wallet.createRandom().address;
    const planA = await chain.adapter.prepareForward({ deposit: a, derivationIndex: 11n, addressOut: outA, priority: 'fast' });
    const planB = await chain.adapter.prepareForward({ deposit: b, derivationIndex: 12n, addressOut: outB, priority: 'fast' });
    await Promise.all([chain.adapter.broadcast(planA), chain.adapter.broadcast(planB)]);
    await chain.mine(1);
    expect(await chain.balanceOf(outA)).toBe(3_000_000n);
    expect(await chain.balanceOf(outB)).toBe(4_000_000n);
    // Retrying a broadcast after everything landed changes nothing.
    await chain.adapter.broadcast(planB);
    await chain.mine(1);
    expect(await chain.balanceOf(outB)).toBe(4_000_000n);
    expect((await chain.adapter.forwardStatus(planB)).status).toBe('confirmed');
  });
});

describe('ETH forwards from one address_in', () => {
  let chain: LiveChain;
  beforeAll(async () => {
    chain = await anvilChain('eth', testSeed());
  });
  afterAll(async () => {
    await chain?.stop();
  });

  test('plans prepared together share a nonce: the second is refused, never mined twice', async () => {
    const first = await depositTo(chain, 21n, parseEther('1'));
    const second = await depositTo(chain, 21n, parseEther('2'));
    const out = Wallet.createRandom().address;
    const p1 = await chain.adapter.prepareForward({ deposit: first, derivationIndex: 21n, addressOut: out, priority: 'default' });
    const p2 = await chain.adapter.prepareForward({ deposit: second, derivationIndex: 21n, addressOut: out, priority: 'default' });
    await chain.adapter.broadcast(p1);
    await chain.mine(1);
    const refused = await chain.adapter.broadcast(p2).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BroadcastRejectedError);
    expect((refused as BroadcastRejectedError).reprepare).toBe(true);
    expect(await chain.adapter.forwardStatus(p2)).toEqual({ status: 'failed', reason: 'nonce used by another transaction', reprepare: true });
    expect(await chain.balanceOf(out)).toBe(p1.forwarded);
    // Re-prepared after the first landed, the second forward goes through.
    const p2b = await chain.adapter.prepareForward({ deposit: second, derivationIndex: 21n, addressOut: out, priority: 'default' });
    await chain.adapter.broadcast(p2b);
    await chain.mine(1);
    expect(await chain.balanceOf(out)).toBe(p1.forwarded + p2b.forwarded);
  });
});
