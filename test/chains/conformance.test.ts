/**
 * One adapter conformance suite, run against every family's live local node: real anvil (ETH and a
 * solc-compiled ERC-20), real surfnet (SOL and an SPL mint), and in regtest real litecoind (LTC), the local
 * Bitcoin node (BTC: Bitcoin Knots, or btcd) and bchd (BCH), as `npm run devnet -- install` installs them.
 */
import { randomInt } from 'node:crypto';
import type { Cursor, ObservedDeposit, ScannedBlock } from '../../src/chains/adapter';
import { depositKey } from '../../src/chains/adapter';
import { NETWORKS } from '../../src/domain/assets';
import { isAlive } from '../helpers/process';
import { anvilChain, requiredLitecoinChain, surfnetChain, testSeed, type LiveChain } from '../helpers/nodes';
import { requiredUtxoChain } from '../helpers/utxo-chains';

jest.setTimeout(180_000);

/** Every deposit to `address` of the chain's ticker after `from`, reading up to the head. */
async function scanFor(chain: LiveChain, from: Cursor, address: string): Promise<{ found: ObservedDeposit[]; cursor: Cursor }> {
  let cursor = from;
  const found: ObservedDeposit[] = [];
  const head = await chain.adapter.head();
  for (let i = 0; i < 100 && cursor.height < head.height; i++) {
    const batch = await chain.adapter.scan(cursor, 50);
    for (const b of batch.blocks) found.push(...b.deposits.filter((d) => d.recipient === address && d.ticker === chain.ticker));
    cursor = batch.cursor;
  }
  return { found, cursor };
}

/** The scanned block, after `from`, whose transactions include `txid`. */
async function blockHolding(chain: LiveChain, from: Cursor, txid: string): Promise<ScannedBlock> {
  let cursor = from;
  for (let i = 0; i < 20; i++) {
    const batch = await chain.adapter.scan(cursor, 50);
    const block = batch.blocks.find((b) => b.txids?.includes(txid));
    if (block) return block;
    cursor = batch.cursor;
  }
  throw new Error(`no scanned block holds ${txid}`);
}

const factories: [string, () => Promise<LiveChain>][] = [
  ['anvil eth', () => anvilChain('eth', testSeed())],
  ['anvil erc20', () => anvilChain('erc20_usdt', testSeed())],
  ['surfnet sol', () => surfnetChain('sol', testSeed())],
  ['surfnet spl', () => surfnetChain('sol_usdc', testSeed())],
];
factories.push(['litecoind ltc', () => requiredLitecoinChain(testSeed())]);
factories.push(['local bitcoin node btc', () => requiredUtxoChain('bitcoin', testSeed())]);
factories.push(['bchd bch', () => requiredUtxoChain('bitcoincash', testSeed())]);

describe.each(factories)('%s', (_name, start) => {
  let chain: LiveChain;
  let deposit: ObservedDeposit;
  const index = BigInt(randomInt(0, 2 ** 31 - 1));

  beforeAll(async () => {
    chain = await start();
  });
  afterAll(async () => {
    await chain?.stop();
    for (const pid of chain?.pids ?? []) expect(isAlive(pid)).toBe(false);
  });

  test('derive → pay → scan finds exactly one deposit with the right amount and identity', async () => {
    const address = chain.adapter.deriveAddressIn(index);
    expect(chain.adapter.validateAddress(address)).toBe(true);
    expect(chain.adapter.deriveAddressIn(index)).toBe(address);
    const from = await chain.adapter.head();
    const txid = await chain.pay(address, chain.amount);
    await chain.mine(1);
    const { found } = await scanFor(chain, from, address);
    expect(found).toHaveLength(1);
    deposit = found[0];
    expect(deposit.txid).toBe(txid);
    expect(deposit.amount).toBe(chain.amount);
    expect(deposit.network).toBe(chain.adapter.network);
    expect(depositKey(deposit)).toBe(`deposit:${deposit.network}:${txid}:${deposit.index}`);
  });

  test('confirmations rise with mined blocks', async () => {
    const before = await chain.adapter.confirmations(deposit);
    expect(before.status).toBe('confirmed');
    await chain.advance(deposit);
    const after = await chain.adapter.confirmations(deposit);
    expect(after.status).toBe('confirmed');
    expect(after.confirmations).toBeGreaterThan(before.confirmations);
  });

  test('prepare + broadcast lands at address_out with the exact amount; the same bytes again change nothing', async () => {
    const addressOut = await chain.freshAddressOut();
    const estimate = await chain.adapter.estimateForwardCost(chain.ticker, 'default');
    const plan = await chain.adapter.prepareForward({ deposit, derivationIndex: index, addressOut, priority: 'default' });
    expect(plan.forwarded).toBe(chain.amount - plan.networkFee);
    expect(plan.txidOut).toBe(plan.txs[plan.txs.length - 1].txid);
    expect(plan.networkFee + plan.sponsorCost).toBeGreaterThan(0n);
    // Tokens: the gateway pays gas (EVM top-up) or fees plus the merchant's new token account (SPL rent).
    if (chain.ticker === 'erc20_usdt') expect(plan.txs.map((t) => t.role)).toEqual(['gas-topup', 'forward']);
    if (chain.ticker === 'sol_usdc') expect(plan.rent).toBeGreaterThan(0n);
    if (chain.ticker === 'erc20_usdt' || chain.ticker === 'sol_usdc') expect(plan.sponsorCost).toBeGreaterThan(plan.rent);
    expect(plan.networkFee).toBeLessThanOrEqual(estimate.networkFee * 2n + 1n);
    // Signing is deterministic: the same inputs sign to the same bytes. (A Solana transaction embeds a
    // recent blockhash, which moves every slot: there only the stored bytes are ever re-sent.)
    if (chain.adapter.network !== 'solana') {
      const again = await chain.adapter.prepareForward({ deposit, derivationIndex: index, addressOut, priority: 'default' });
      expect(again.txs.map((t) => t.raw)).toEqual(plan.txs.map((t) => t.raw));
    }
    const stored = JSON.parse(JSON.stringify(plan, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));

    const beforeForward = await chain.adapter.head();
    await chain.adapter.broadcast(plan);
    await chain.mine(1);
    await waitForStatus(chain, plan);
    expect(await chain.balanceOf(addressOut)).toBe(plan.forwarded);
    // The block holding the forward shows what it used up, as it would show a rival's that took its place
    // (src/detection/push.ts: dropped): the source's nonce on EVM, the deposit output on UTXO chains.
    const holding = await blockHolding(chain, beforeForward, plan.txidOut);
    if (plan.nonce !== undefined && plan.nonce !== null) expect(holding.nonces).toContainEqual({ source: chain.adapter.deriveAddressIn(index), nonce: BigInt(plan.nonce) });
    if (NETWORKS[chain.adapter.network].family === 'utxo') expect(holding.outpoints).toContainEqual({ txid: deposit.txid, vout: deposit.index });

    await chain.adapter.broadcast({ ...plan, txs: stored.txs });
    await chain.mine(1);
    expect(await chain.balanceOf(addressOut)).toBe(plan.forwarded);
    expect((await chain.adapter.forwardStatus(plan)).status).toBe('confirmed');
  });

  test('a reorg before finality is reported, never counted; a re-mined deposit counts from its new block', async () => {
    if (!chain.reorg) {
      // surfnet has no fork choice to reorganise; its finality is binary and only `finalized` counts.
      expect(chain.adapter.network).toBe('solana');
      return;
    }
    const address = chain.adapter.deriveAddressIn(index + 1n);
    const checkpoint = await chain.reorg.checkpoint();
    const from = await chain.adapter.head();
    await chain.pay(address, chain.amount);
    await chain.mine(1);
    const { found } = await scanFor(chain, from, address);
    expect(found).toHaveLength(1);
    expect((await chain.adapter.confirmations(found[0])).status).toBe('confirmed');
    await chain.reorg.undo(checkpoint, found[0]);
    expect(await chain.adapter.confirmations(found[0])).toMatchObject({ status: 'reorged', confirmations: 0 });
    // The same transaction mined again in another block counts from that block only.
    await chain.reorg.reinclude(found[0]);
    await chain.mine(2);
    const moved = await chain.adapter.confirmations(found[0]);
    expect(moved.status).toBe('confirmed');
    if (moved.status !== 'confirmed') return;
    expect(moved.block?.hash).toBeDefined();
    expect(moved.block?.hash).not.toBe(found[0].blockHash);
    const head = await chain.adapter.head();
    expect(moved.confirmations).toBe(Number(head.height - moved.block!.number + 1n));
  });
});

async function waitForStatus(chain: LiveChain, plan: Parameters<LiveChain['adapter']['forwardStatus']>[0]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const s = await chain.adapter.forwardStatus(plan);
    if (s.status === 'confirmed') return;
    if (s.status === 'failed') throw new Error(`forward failed: ${s.reason}`);
    if (Date.now() > deadline) throw new Error('forward not confirmed within 30 s');
    await chain.mine(1);
  }
}
