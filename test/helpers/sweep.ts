import { eq } from 'drizzle-orm';
import { createDepositActivities } from '../../activities/deposit';
import type { ObservedDeposit } from '../../src/chains/adapter';
import { writeCursor } from '../../src/detection/watcher';
import type { Database } from '../../src/db/client';
import { loadPayment, recordDeposit, storeFeePercent } from '../../src/db/queries/payments';
import { paymentConfigs, sweeps } from '../../src/db/schema';
import { ASSETS, NETWORKS } from '../../src/domain/assets';
import { dueHeight } from '../../src/domain/finality';
import { STANDARD_TIERS } from '../../src/domain/standard-tiers';
import { DEVNET_PRICES, FixedPriceSource } from '../../src/prices/source';
import { TREASURY_INDEX } from '../../src/runtime/services';
import type { SweepDeps } from '../../src/sweep/list';
import type { LiveChain } from './nodes';
import { waitFor } from './process';
import { callbackColumns } from './callback-columns';

/** A live chain with the real database: payments made, recorded and forwarded as the worker does, and the sweep's deps. */
export function sweepBench(chain: LiveChain, database: Database) {
  const network = ASSETS[chain.ticker].network;
  const treasury = chain.adapter.deriveAddressIn(TREASURY_INDEX);
  const deps: SweepDeps = { db: database.db, withLock: database.withLock, adapter: async () => chain.adapter, treasuryAddress: () => treasury };
  const depositDeps = { ...deps, prices: new FixedPriceSource(DEVNET_PRICES), feePolicy: { domainOverrides: {}, tiers: [...STANDARD_TIERS] } };
  const acts = createDepositActivities(depositDeps);

  /** A real payment to address_in `index`, recorded as the watcher records it (pending: live). */
  async function deposit(index: bigint, amount: bigint): Promise<{ uuid: string; addressIn: string; observed: ObservedDeposit }> {
    const to = chain.adapter.deriveAddressIn(index);
    const from = await chain.adapter.head();
    const txid = await chain.pay(to, amount);
    let observed: ObservedDeposit | undefined;
    // surfnet: the payment's slot may be confirmed a moment after its signature.
    await waitFor(async () => {
      const batch = await chain.adapter.scan(from, 1000);
      observed = batch.blocks.flatMap((b) => b.deposits).find((d) => d.txid === txid && d.recipient === to);
      return observed !== undefined;
    }, 30_000, 'the deposit in a scanned block');
    const d = observed!;
    const [existing] = await database.db.select().from(paymentConfigs).where(eq(paymentConfigs.addressIn, to));
    const config =
      existing ??
      (
        await database.db
          .insert(paymentConfigs)
          .values({
            ...callbackColumns(`https://shop.example/sweep/${network}/${index}`), ticker: chain.ticker, family: NETWORKS[network].addressFamily, addressIn: to,
            addressOut: await chain.freshAddressOut(), derivationIndex: index, notifyPending: false, notifyConfirmations: 1, post: 0, json: 0, convert: 0, priority: 'default',
          })
          .returning()
      )[0];
    const { row } = await recordDeposit(database.db, {
      configId: config.id, ticker: chain.ticker, network, depositKey: `deposit:${network}:${txid}:${d.index}`, txidIn: txid, vout: null,
      blockNumber: d.blockNumber, blockHash: d.blockHash, valueBase: d.amount, dueHeight: dueHeight(network, d.blockNumber, 1),
    });
    // Judged as the deposit's evaluation judges it: the standard fee of a new host, chosen once and stored.
    await storeFeePercent(database.db, row.uuid, '1.00');
    return { uuid: row.uuid, addressIn: to, observed: d };
  }

  /** Forwards a recorded payment and waits until its forward is mined and its snapshot written (result sent). */
  async function complete(uuid: string): Promise<void> {
    await acts.recordProcessing(uuid);
    await acts.forward(uuid);
    await waitFor(async () => (await acts.forwardFate(uuid)).status === 'confirmed', 60_000, 'the forward mined');
    await acts.confirmedSnapshot(uuid);
    expect((await loadPayment(database.db, uuid)).payment.result).toBe('sent');
  }

  /** The watcher has read up to the current head (it records every deposit up to there before its cursor moves). */
  const watcherAtHead = async () => writeCursor(database.db, network, await chain.adapter.head());

  const sweepRows = (source: string) => database.db.select().from(sweeps).where(eq(sweeps.source, source));

  return { network, treasury, deps, depositDeps, acts, deposit, complete, watcherAtHead, sweepRows };
}
