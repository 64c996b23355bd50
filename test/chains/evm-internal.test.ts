/**
 * Ether a contract sends to a deposit address (an internal call: a forwarder, an exchange's batch
 * withdrawal, a smart wallet) is a deposit, read from the node's call traces on a live anvil and the real
 * PostgreSQL: once each, with its exact amount and a key of its own; nothing for a call that reverted, a
 * DELEGATECALL or a failed transaction; confirmed and forwarded like a top-level ETH deposit. Every figure
 * is checked against the chain's balances.
 */
import { Wallet, parseEther, type Contract, type JsonRpcProvider } from 'ethers';
import { depositKey, type ObservedDeposit } from '../../src/chains/adapter';
import type { EvmAdapter } from '../../src/chains/evm/adapter';
import { INTERNAL_INDEX_BASE } from '../../src/chains/evm/internal-transfers';
import { jsonRpc } from '../../src/chains/json-rpc';
import { paymentConfigs } from '../../src/db/schema';
import { scanOnce, type MatchedDeposit } from '../../src/detection/watcher';
import { anvilWatchBed, type AnvilWatchBed } from '../helpers/anvil-watch';
import { deployPayer } from '../helpers/payer-contracts';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(180_000);

let bed: AnvilWatchBed;
let adapter: EvmAdapter;
let provider: JsonRpcProvider;
let customer: Wallet;
let payer: Contract;
let nextIndex = 1n;

/** A fresh watched address_in (an eth configuration at the next HD index). */
async function watched(): Promise<{ index: bigint; address: string }> {
  const index = nextIndex++;
  const address = adapter.deriveAddressIn(index);
  await bed.db.insert(paymentConfigs).values({
    ...callbackColumns(`https://shop.example/internal/${index}`), ticker: 'eth', family: 'evm', addressIn: address,
    addressOut: Wallet.createRandom().address, derivationIndex: index, notifyPending: false, notifyConfirmations: 1,
    post: 0, json: 0, convert: 0, priority: 'default',
  });
  return { index, address };
}

/** Sends a call of the Payer and waits for its block; returns the transaction's hash. */
async function pay(method: string, args: unknown[], value: bigint, gasLimit?: bigint): Promise<string> {
  const tx = await payer.getFunction(method)(...args, { value, ...(gasLimit ? { gasLimit } : {}) });
  await provider.waitForTransaction(tx.hash as string);
  return tx.hash as string;
}

/** One watcher pass up to the head; what it matched. */
async function pass(): Promise<MatchedDeposit[]> {
  return scanOnce(adapter, bed.db, 'ethereum', { maxBlocks: 500 });
}

const summary = (m: MatchedDeposit[]) => m.map((x) => [x.deposit.txid, x.deposit.index, x.deposit.recipient, x.deposit.amount]);

beforeAll(async () => {
  bed = await anvilWatchBed('gw-internal-');
  adapter = (await bed.registry.get('ethereum')) as EvmAdapter;
  provider = bed.provider;
  customer = new Wallet(bed.node.customerKey, provider);
  payer = await deployPayer(customer);
  await watched(); // a watched address from the start, so that the first pass stores a cursor
  await pass();
});
afterAll(async () => {
  await bed?.close();
});

test('a forwarder contract\'s payment is one deposit: its amount, a key of its own, read again the same; a direct payment stays index -1', async () => {
  const a = await watched();
  const amount = parseEther('0.3');
  const txid = await pay('forward', [a.address], amount);
  const direct = await customer.sendTransaction({ to: a.address, value: parseEther('0.01') });
  await direct.wait();
  const matched = await pass();
  expect(summary(matched)).toEqual([
    [txid, INTERNAL_INDEX_BASE, a.address, amount],
    [direct.hash, -1, a.address, parseEther('0.01')],
  ]);
  expect(depositKey(matched[0].deposit)).toBe(`deposit:ethereum:${txid}:1000000000`);
  expect(matched[0].deposit.sender).toBe(await payer.getAddress());
  // Counted on chain: what address_in holds is exactly the two deposits.
  expect(await provider.getBalance(a.address)).toBe(amount + parseEther('0.01'));
  // Read again (a re-read block, another worker): the same identity, nothing new.
  const again = await adapter.scanBlock(matched[0].deposit.blockNumber);
  expect(again.deposits.filter((d) => d.recipient === a.address).map((d) => depositKey(d))).toEqual([depositKey(matched[0].deposit)]);
  expect(await pass()).toEqual([]);
});

test('one transaction of a batch paying two address_in (one of them twice) is three deposits with their exact amounts', async () => {
  const [b, c] = [await watched(), await watched()];
  const other = Wallet.createRandom().address;
  const amounts = [parseEther('0.11'), 123_456_789n, parseEther('0.02'), parseEther('0.05')];
  const txid = await pay('batch', [[b.address, c.address, other, b.address], amounts], amounts.reduce((s, x) => s + x, 0n));
  const matched = await pass();
  expect(summary(matched)).toEqual([
    [txid, INTERNAL_INDEX_BASE, b.address, amounts[0]],
    [txid, INTERNAL_INDEX_BASE + 1, c.address, amounts[1]],
    [txid, INTERNAL_INDEX_BASE + 3, b.address, amounts[3]],
  ]);
  expect(new Set(matched.map((m) => depositKey(m.deposit))).size).toBe(3);
  expect(await provider.getBalance(b.address)).toBe(amounts[0] + amounts[3]);
  expect(await provider.getBalance(c.address)).toBe(amounts[1]);
});

test('a batch whose inner calls revert (one caught, one ignored) pays only through the call that succeeded', async () => {
  const [good, bad] = [await watched(), await watched()];
  const txid = await pay('payOneRevertOthers', [good.address, bad.address, 5_000n, 7_000n], 19_000n);
  const matched = await pass();
  // Depth-first among the frames that carry value: the two reverted relays and their payments are 0-3,
  // the call to the relay that pays is 4, its payment 5.
  expect(summary(matched)).toEqual([[txid, INTERNAL_INDEX_BASE + 5, good.address, 5_000n]]);
  expect(await provider.getBalance(good.address)).toBe(5_000n);
  expect(await provider.getBalance(bad.address)).toBe(0n);
});

test('a DELEGATECALL with msg.value and a transaction that failed after paying move nothing: no deposit', async () => {
  const d = await watched();
  await pay('delegateTo', [d.address], 11_000n);
  const failed = await payer.getFunction('payThenFail')(d.address, { value: 13_000n, gasLimit: 200_000n });
  expect((await provider.waitForTransaction(failed.hash as string))?.status).toBe(0);
  expect(await pass()).toEqual([]);
  expect(await provider.getBalance(d.address)).toBe(0n);
});

test('ether a SELFDESTRUCT sends is a deposit', async () => {
  const e = await watched();
  const txid = await pay('payBySelfdestruct', [e.address], 17_000n);
  const matched = await pass();
  // The CREATE that funds the contract is frame 0; its SELFDESTRUCT to address_in frame 1.
  expect(summary(matched)).toEqual([[txid, INTERNAL_INDEX_BASE + 1, e.address, 17_000n]]);
  expect(await provider.getBalance(e.address)).toBe(17_000n);
});

test('forwarded like a top-level ETH deposit: address_out receives exactly the plan\'s amount', async () => {
  const a = await watched();
  const amount = parseEther('0.5');
  await pass();
  await pay('forward', [a.address], amount);
  const [m] = await pass();
  const deposit: ObservedDeposit = m.deposit;
  expect(deposit.index).toBe(INTERNAL_INDEX_BASE);
  const addressOut = Wallet.createRandom().address;
  const commission = amount / 100n;
  const plan = await adapter.prepareForward({ deposit, derivationIndex: a.index, addressOut, priority: 'default', commission });
  await adapter.broadcast(plan);
  expect(await adapter.forwardStatus(plan)).toMatchObject({ status: 'confirmed' });
  expect(await provider.getBalance(addressOut)).toBe(plan.forwarded);
  expect(plan.forwarded).toBe(amount - commission - plan.networkFee);
});

describe('a contract-sent deposit through a reorg', () => {
  /** A signed forward() to `to` (raw bytes), to be mined, reorganised out, and mined again. */
  async function signedForward(to: string, value: bigint): Promise<string> {
    const req = await payer.getFunction('forward').populateTransaction(to, { value });
    const populated = await customer.populateTransaction(req);
    return customer.signTransaction(populated);
  }

  test('confirmations count from its block; mined again in another block it stays confirmed there, never reorged', async () => {
    const a = await watched();
    const raw = await signedForward(a.address, parseEther('0.2'));
    const snap = await jsonRpc<string>(bed.node.rpcUrl, 'evm_snapshot');
    const txid = await jsonRpc<string>(bed.node.rpcUrl, 'eth_sendRawTransaction', [raw]);
    await provider.waitForTransaction(txid);
    const [m] = (await pass()).filter((x) => x.deposit.recipient === a.address);
    expect(summary([m])).toEqual([[txid, INTERNAL_INDEX_BASE, a.address, parseEther('0.2')]]);
    await jsonRpc(bed.node.rpcUrl, 'anvil_mine', ['0x2']);
    expect(await adapter.confirmations(m.deposit)).toEqual({ status: 'confirmed', confirmations: 3 });
    // The block goes; two empty blocks, then the same bytes mined again at another height.
    await jsonRpc(bed.node.rpcUrl, 'evm_revert', [snap]);
    await jsonRpc(bed.node.rpcUrl, 'anvil_mine', ['0x2']);
    await jsonRpc(bed.node.rpcUrl, 'eth_sendRawTransaction', [raw]);
    const receipt = (await provider.waitForTransaction(txid))!;
    expect(receipt.blockHash).not.toBe(m.deposit.blockHash);
    const c = await adapter.confirmations(m.deposit);
    expect(c).toEqual({ status: 'confirmed', confirmations: 1, block: { number: BigInt(receipt.blockNumber), hash: receipt.blockHash } });
    expect(await provider.getBalance(a.address)).toBe(parseEther('0.2'));
  });

  test('reorganised out and not mined again: a reorg reading', async () => {
    const a = await watched();
    const snap = await jsonRpc<string>(bed.node.rpcUrl, 'evm_snapshot');
    await pay('forward', [a.address], 1_000_000n);
    // The pass rewinds past the previous test's reorg and reads earlier blocks again: this address only.
    const [m] = (await pass()).filter((x) => x.deposit.recipient === a.address);
    expect(m.deposit.recipient).toBe(a.address);
    await jsonRpc(bed.node.rpcUrl, 'evm_revert', [snap]);
    await jsonRpc(bed.node.rpcUrl, 'anvil_mine', ['0x3']);
    expect(await adapter.confirmations(m.deposit)).toMatchObject({ status: 'reorged' });
    expect(await provider.getBalance(a.address)).toBe(0n);
  });
});
