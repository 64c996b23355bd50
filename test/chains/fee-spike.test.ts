/**
 * A gas spike on a live anvil (issue 55, item 3: only final facts fail a payment): a deposit above the
 * minimum, evaluated while the base fee makes its forward cost more than the deposit, is kept (the pending
 * callback withheld), not failed; the forward tried then is refused with a typed failure and nothing is
 * stored (the workflow waits on it, test/workflows/payment-waiting.test.ts); once the base fee is back down
 * the same payment forwards, counted on chain. Real PostgreSQL.
 */
import { Wallet, parseEther } from 'ethers';
import { ApplicationFailure } from '@temporalio/common';
import { createDepositActivities } from '../../activities/deposit';
import { planFromJson } from '../../activities/forward-support';
import { judgeObserved } from '../../activities/observed';
import { loadPayment, recordDeposit } from '../../src/db/queries/payments';
import { paymentConfigs } from '../../src/db/schema';
import { dueHeight } from '../../src/domain/finality';
import { STANDARD_TIERS } from '../../src/domain/standard-tiers';
import { DEVNET_PRICES, FixedPriceSource } from '../../src/prices/source';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { jsonRpc } from '../../src/chains/json-rpc';
import { FEE_READING_MS } from '../../src/chains/evm/fees';
import { createTestDatabase } from '../helpers/db';
import { anvilChain, testSeed, tmpDir, type LiveChain } from '../helpers/nodes';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(120_000);

let chain: LiveChain;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let node: AnvilDevnet;
let acts: ReturnType<typeof createDepositActivities>;
let deps: Parameters<typeof createDepositActivities>[0];

beforeAll(async () => {
  [node, database] = await Promise.all([startAnvil({ dir: tmpDir('gw-fee-spike-') }), createTestDatabase()]);
  chain = await anvilChain('eth', testSeed(), node);
  deps = {
    db: database.db,
    withLock: database.withLock,
    adapter: async () => chain.adapter,
    prices: new FixedPriceSource(DEVNET_PRICES),
    feePolicy: { domainOverrides: {}, tiers: [...STANDARD_TIERS] },
    treasuryAddress: () => undefined,
  };
  acts = createDepositActivities(deps);
});

afterAll(async () => {
  await chain?.stop();
  await node?.stop();
  await database?.drop();
});

/** The next block's base fee, then that block mined; the adapter's fee reading (kept FEE_READING_MS) is let expire. */
async function baseFee(wei: bigint): Promise<void> {
  await jsonRpc(node.rpcUrl, 'anvil_setNextBlockBaseFeePerGas', [`0x${wei.toString(16)}`]);
  await chain.mine(1);
  await new Promise((r) => setTimeout(r, FEE_READING_MS + 100));
}

test('a deposit above the minimum during a gas spike is kept and forwarded once the spike is over', async () => {
  const index = 41n;
  const to = chain.adapter.deriveAddressIn(index);
  const addressOut = Wallet.createRandom().address;
  const from = await chain.adapter.head();
  const txid = await chain.pay(to, parseEther('0.05'));
  const observed = (await chain.adapter.scan(from, 100)).blocks.flatMap((b) => b.deposits).find((d) => d.txid === txid && d.recipient === to)!;
  const [config] = await database.db
    .insert(paymentConfigs)
    .values({
      ...callbackColumns('https://shop.example/spike'), ticker: 'eth', family: 'evm', addressIn: to, addressOut,
      derivationIndex: index, notifyPending: true, notifyConfirmations: 1, post: 0, json: 0, convert: 0, priority: 'default',
    })
    .returning();
  const { row } = await recordDeposit(database.db, {
    configId: config.id, ticker: 'eth', network: 'ethereum', depositKey: `deposit:ethereum:${txid}:${observed.index}`, txidIn: txid, vout: null,
    blockNumber: observed.blockNumber, blockHash: observed.blockHash, valueBase: observed.amount, dueHeight: dueHeight('ethereum', observed.blockNumber, 1),
  });

  // 1,000,000 gwei a gas: a plain transfer costs 21 ETH, far above the 0.05 deposited.
  await baseFee(10n ** 15n);
  const { payment, config: stored } = await loadPayment(database.db, row.uuid);
  expect(await judgeObserved(deps, payment, stored)).toEqual({ eligible: true, evidence: false });
  await acts.recordProcessing(row.uuid);
  const refused = await acts.forward(row.uuid).then(() => undefined, (e: unknown) => e);
  expect(refused).toBeInstanceOf(ApplicationFailure);
  expect(refused).toMatchObject({ type: 'InsufficientAmountError', nonRetryable: true });
  expect((await loadPayment(database.db, row.uuid)).payment).toMatchObject({ result: 'processing', forwardRaw: null, txidOut: null });

  // The spike is over: the same payment forwards (the workflow's next try), one transaction, counted on chain.
  await baseFee(10n ** 9n);
  const sent = await acts.forward(row.uuid);
  await chain.mine(1);
  expect(await acts.forwardFate(row.uuid)).toEqual({ status: 'confirmed', txidOut: sent.txidOut });
  const forwarded = (await loadPayment(database.db, row.uuid)).payment;
  expect(forwarded.txidOut).toBe(sent.txidOut);
  const plan = planFromJson(forwarded.forwardRaw!);
  expect(plan.forwarded).toBeGreaterThan(0n);
  expect(await chain.balanceOf(addressOut)).toBe(plan.forwarded);
});
