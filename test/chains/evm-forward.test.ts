/**
 * EVM forwards that race on anvil: token forwards prepared together share the gas tank's nonce and
 * both still land (the fungible top-up is re-signed, the stored forward bytes never change); two ETH
 * forwards from one address_in that carry the same nonce can never both be mined, and the loser is
 * replaceable only once our own rival is final; with a nonce floor they never share a nonce at all.
 */
import { JsonRpcProvider, Transaction, Wallet, parseEther } from 'ethers';
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

  test('the broadcast tells its caller when the token transfer goes out: after its top-up is sent and mined, before the transfer', async () => {
    const d = await depositTo(chain, 14n, 2_000_000n);
    const plan = await chain.adapter.prepareForward({ deposit: d, derivationIndex: 14n, addressOut: Wallet.createRandom().address, priority: 'default' });
    const topup = plan.txs.find((t) => t.role === 'gas-topup')!.txid;
    // What the adapter sends, in order, and when it says the transfer goes out.
    const events: string[] = [];
    const provider = (chain.adapter as unknown as { provider: JsonRpcProvider }).provider;
    const send = provider.send.bind(provider);
    const spy = jest.spyOn(provider, 'send').mockImplementation(async (method: string, params: unknown[] | Record<string, unknown>) => {
      if (method === 'eth_sendRawTransaction') {
        const hash = Transaction.from((params as string[])[0]).hash;
        events.push(hash === topup ? 'topup sent' : hash === plan.txidOut ? 'transfer sent' : `other ${hash}`);
      }
      return send(method, params);
    });
    try {
      await chain.adapter.broadcast(plan, { beforeSend: () => void events.push('beforeSend') });
    } finally {
      spy.mockRestore();
    }
    expect(events).toEqual(['topup sent', 'beforeSend', 'transfer sent']);
    await chain.mine(1);
    expect((await chain.adapter.forwardStatus(plan)).status).toBe('confirmed');
  });

  test('two forwards of one address prepared while the tank stood still each bring a top-up of their own; both land', async () => {
    const a = await depositTo(chain, 13n, 5_000_000n);
    const b = await depositTo(chain, 13n, 5_000_000n);
    const out = Wallet.createRandom().address;
    const p1 = await chain.adapter.prepareForward({ deposit: a, derivationIndex: 13n, addressOut: out, priority: 'default' });
    const p2 = await chain.adapter.prepareForward({ deposit: b, derivationIndex: 13n, addressOut: out, priority: 'default', nonceFloor: p1.nonce! + 1 });
    const topups = [p1, p2].map((p) => p.txs.find((t) => t.role === 'gas-topup')!.txid);
    expect(topups[0]).not.toBe(topups[1]);
    await chain.adapter.broadcast(p1);
    await chain.adapter.broadcast(p2);
    await chain.mine(1);
    expect((await chain.adapter.forwardStatus(p1)).status).toBe('confirmed');
    expect((await chain.adapter.forwardStatus(p2)).status).toBe('confirmed');
    expect(await chain.balanceOf(out)).toBe(10_000_000n);
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

  test('plans that share a nonce: the second is refused, and replaceable only once our rival is final', async () => {
    const first = await depositTo(chain, 21n, parseEther('1'));
    const second = await depositTo(chain, 21n, parseEther('2'));
    const out = Wallet.createRandom().address;
    const p1 = await chain.adapter.prepareForward({ deposit: first, derivationIndex: 21n, addressOut: out, priority: 'default' });
    const p2 = await chain.adapter.prepareForward({ deposit: second, derivationIndex: 21n, addressOut: out, priority: 'default' });
    expect(p2.nonce).toBe(p1.nonce);
    await chain.adapter.broadcast(p1);
    await chain.mine(1);
    await expect(chain.adapter.broadcast(p2)).rejects.toBeInstanceOf(BroadcastRejectedError);
    // A used nonce without a known rival, or with one not yet final, is no evidence.
    expect(await chain.adapter.forwardStatus(p2, { rivals: [p1.txidOut] })).toEqual({ status: 'pending', known: false });
    await chain.mine(12);
    const unknownRival = await chain.adapter.forwardStatus(p2);
    expect(unknownRival).toMatchObject({ status: 'pending', known: false });
    expect((unknownRival as { note?: string }).note).toMatch(/no receipt/);
    const evidence = await chain.adapter.forwardStatus(p2, { rivals: [p1.txidOut] });
    expect(evidence).toMatchObject({ status: 'replaceable' });
    // Rivals given as a reader are read only by a reading that needs them: not for a mined forward.
    let asked = 0;
    const reader = async () => (asked++, [p1.txidOut]);
    expect(await chain.adapter.forwardStatus(p2, { rivals: reader })).toMatchObject({ status: 'replaceable' });
    expect(asked).toBe(1);
    expect(await chain.adapter.forwardStatus(p1, { rivals: reader })).toMatchObject({ status: 'confirmed' });
    expect(asked).toBe(1);
    expect(await chain.balanceOf(out)).toBe(p1.forwarded);
    // Re-prepared above the stored nonce, the second forward goes through.
    const p2b = await chain.adapter.prepareForward({ deposit: second, derivationIndex: 21n, addressOut: out, priority: 'default', nonceFloor: p1.nonce! + 1 });
    await chain.adapter.broadcast(p2b);
    await chain.mine(1);
    expect(await chain.balanceOf(out)).toBe(p1.forwarded + p2b.forwarded);
  });

  test('with a nonce floor, a forward prepared while an earlier one is unsent takes the next nonce; both land', async () => {
    const first = await depositTo(chain, 22n, parseEther('1'));
    const second = await depositTo(chain, 22n, parseEther('1'));
    const out = Wallet.createRandom().address;
    const p1 = await chain.adapter.prepareForward({ deposit: first, derivationIndex: 22n, addressOut: out, priority: 'default' });
    // Same amount, fees and destination: only the reserved nonce keeps the bytes (and txids) apart.
    const p2 = await chain.adapter.prepareForward({ deposit: second, derivationIndex: 22n, addressOut: out, priority: 'default', nonceFloor: p1.nonce! + 1 });
    expect(p2.txidOut).not.toBe(p1.txidOut);
    await chain.adapter.broadcast(p2);
    await chain.adapter.broadcast(p1);
    await chain.mine(1);
    expect((await chain.adapter.forwardStatus(p1)).status).toBe('confirmed');
    expect((await chain.adapter.forwardStatus(p2)).status).toBe('confirmed');
    expect(await chain.balanceOf(out)).toBe(p1.forwarded + p2.forwarded);
  });
});
