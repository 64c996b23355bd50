import { Wallet } from 'ethers';
import { createDepositActivities } from '../../activities/deposit';
import type { ChainAdapter, ObservedDeposit } from '../../src/chains/adapter';
import { loadPayment, recordDeposit } from '../../src/db/queries/payments';
import type { FeePolicy } from '../../src/domain/fees';
import { paymentConfigs } from '../../src/db/schema';
import { dueHeight } from '../../src/domain/finality';
import { STANDARD_TIERS } from '../../src/domain/standard-tiers';
import { DEVNET_PRICES, FixedPriceSource } from '../../src/prices/source';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import type { headHub } from '../../src/detection/heads';
import { createTestDatabase } from './db';
import { anvilChain, testSeed, tmpDir, type LiveChain } from './nodes';
import { callbackColumns } from './callback-columns';

export const REQUIRED = 3;
export const STANDARD: FeePolicy = { domainOverrides: {}, tiers: [...STANDARD_TIERS] };

/** A live anvil, the real PostgreSQL and the deposit activities on them, for the steps from finality on. */
export interface DueForwardBed {
  readonly chain: LiveChain;
  readonly node: AnvilDevnet;
  readonly database: Awaited<ReturnType<typeof createTestDatabase>>;
  /** The activities as the worker makes them; `heads` as its head feeds report to it. */
  activitiesWith(heads?: ReturnType<typeof headHub>, adapter?: ChainAdapter, feePolicy?: FeePolicy, prices?: FixedPriceSource): ReturnType<typeof createDepositActivities>;
  /** A real payment to a fresh address_in, recorded as the watcher records it. */
  deposit(index: bigint, amount: bigint): Promise<{ uuid: string; observed: ObservedDeposit }>;
  /** A final deposit as the workflow leaves it before its forward: judged (its fee percent chosen), still pending. */
  due(index: bigint, amount: bigint, acts?: ReturnType<typeof createDepositActivities>): Promise<string>;
}

/** Starts the bed before the file's tests and stops it after them. */
export function dueForwardBed(): DueForwardBed {
  let chain: LiveChain;
  let node: AnvilDevnet;
  let database: DueForwardBed['database'];
  beforeAll(async () => {
    [node, database] = await Promise.all([startAnvil({ dir: tmpDir('gw-due-forward-') }), createTestDatabase()]);
    chain = await anvilChain('eth', testSeed(), node);
  });
  afterAll(async () => {
    await chain?.stop();
    await node?.stop();
    await database?.drop();
  });
  const bed: DueForwardBed = {
    get chain() {
      return chain;
    },
    get node() {
      return node;
    },
    get database() {
      return database;
    },
    activitiesWith: (heads, adapter, feePolicy = STANDARD, prices = new FixedPriceSource(DEVNET_PRICES)) =>
      createDepositActivities({
        db: database.db,
        withLock: database.withLock,
        adapter: async () => adapter ?? chain.adapter,
        prices,
        feePolicy,
        treasuryAddress: () => undefined,
        ...(heads ? { heads } : {}),
      }),
    async deposit(index, amount) {
      const to = chain.adapter.deriveAddressIn(index);
      const from = await chain.adapter.head();
      const txid = await chain.pay(to, amount);
      const batch = await chain.adapter.scan(from, 100);
      const observed = batch.blocks.flatMap((b) => b.deposits).find((d) => d.txid === txid && d.recipient === to);
      if (!observed) throw new Error('deposit not found');
      const [config] = await database.db
        .insert(paymentConfigs)
        .values({
          ...callbackColumns(`https://shop.example/due/${index}`), ticker: 'eth', family: 'evm', addressIn: to, addressOut: Wallet.createRandom().address,
          derivationIndex: index, notifyPending: false, notifyConfirmations: REQUIRED, post: 0, json: 0, convert: 0, priority: 'default',
        })
        .returning();
      const { row: payment } = await recordDeposit(database.db, {
        configId: config.id, ticker: 'eth', network: 'ethereum', depositKey: `deposit:ethereum:${txid}:${observed.index}`, txidIn: txid, vout: null,
        blockNumber: observed.blockNumber, blockHash: observed.blockHash, valueBase: observed.amount, dueHeight: dueHeight('ethereum', observed.blockNumber, REQUIRED),
      });
      return { uuid: payment.uuid, observed };
    },
    async due(index, amount, acts = bed.activitiesWith()) {
      const { uuid, observed } = await bed.deposit(index, amount);
      const { payment } = await loadPayment(database.db, uuid);
      await acts.recordAndEvaluate({
        configId: payment.configId, network: 'ethereum', ticker: 'eth', txid: observed.txid, index: observed.index, recipient: observed.recipient,
        amount: observed.amount.toString(), blockNumber: observed.blockNumber.toString(), blockHash: observed.blockHash,
      });
      await chain.mine(REQUIRED - 1);
      return uuid;
    },
  };
  return bed;
}
