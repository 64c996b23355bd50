import pLimit from 'p-limit';
import { Client, WorkflowExecutionAlreadyStartedError, WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { DepositInput } from '../../activities/deposit';
import { depositKey } from '../chains/adapter';
import { sponsorAddresses } from '../chains/sponsor';
import { pushHints, TEMPORAL_CALLS_AT_ONCE, type SignalDeposit } from '../detection/push';
import { startWatchers, type MatchedDeposit } from '../detection/watcher';
import { hasHeadFeed, headHub, openHeadFeed } from '../detection/heads';
import { openLongPollFeed } from '../detection/long-poll-feed';
import { chainSignal } from '../../workflows/signals';
import type { Db } from '../db/client';
import { insertDeposits, type NewDeposit } from '../db/queries/payments';
import { NETWORKS } from '../domain/assets';
import { dueHeight } from '../domain/finality';
import { logger } from '../observability/logger';
import { depositsObserved } from '../observability/metrics';
import { exposePaymentStages } from '../observability/payment-stages';
import { stageTallies } from '../db/queries/payment-stages';
import { describeError } from '../observability/redact';
import { ensureMinimumSchedule } from '../temporal/minimum-schedule';
import { createWorker } from '../temporal/worker';
import { startPublisher } from '../addresses/public-material';
import type { Services } from './services';
import { workerAssignment, type WorkerAssignment } from './task-queues';

export interface WorkerRuntime {
  worker: Worker;
  /** Its task queue and the networks it watches. */
  serves: WorkerAssignment;
  stop(): Promise<void>;
}

/** The deposit workflow's input for a watcher match. */
export function depositInput(m: MatchedDeposit): DepositInput {
  const d = m.deposit;
  return {
    configId: m.config.id,
    network: d.network,
    ticker: d.ticker,
    txid: d.txid,
    index: d.index,
    recipient: d.recipient,
    amount: d.amount.toString(),
    blockNumber: d.blockNumber.toString(),
    blockHash: d.blockHash,
  };
}

/**
 * Records each matched deposit with the confirmations the watcher saw, before its workflow starts: the
 * workflow's own recordDeposit then finds this row (the deposit key is unique; one UUID), and a deposit
 * that fails eligibility at once (below the minimum) still shows how deep it was mined (SPEC 2.4).
 */
export async function recordDetectedDeposits(db: Db, matches: MatchedDeposit[]): Promise<void> {
  const list = matches.map((m): NewDeposit => {
    const d = m.deposit;
    return {
      configId: m.config.id,
      ticker: d.ticker,
      network: d.network,
      depositKey: depositKey(d),
      txidIn: d.txid,
      vout: NETWORKS[d.network].family === 'utxo' ? d.index : null,
      blockNumber: d.blockNumber,
      blockHash: d.blockHash,
      valueBase: d.amount,
      confirmations: m.confirmations,
      dueHeight: dueHeight(d.network, d.blockNumber, m.config.notifyConfirmations),
    };
  });
  for (const ticker of await insertDeposits(db, list)) depositsObserved.inc({ ticker });
}

/**
 * Starts one payment workflow per match, its ID the deposit identity: a deposit seen twice (a re-read
 * block, a second worker) attaches to the existing workflow instead of starting a second lifecycle,
 * and a finished lifecycle is not started again. Except one that ended failed (DEPOSIT_REORGANISED: the deposit was judged reorganised out, the one
 * verdict the chain can take back): the deposit mined again starts a new lifecycle, which finds its
 * payment row and takes it up again from the new block (activities/observed.ts).
 */
export async function startDepositWorkflows(client: Client, taskQueue: string, matches: MatchedDeposit[], fallback?: string): Promise<void> {
  // Several at a time: one after another, a burst of deposits in one block holds the network's watcher (no
  // new block read, no hint sent) for a round trip to Temporal each (docs/decisions/0001-pushed-hints.md).
  const limit = pLimit(TEMPORAL_CALLS_AT_ONCE);
  await Promise.all(
    matches.map((m) =>
      limit(async () => {
        try {
          await client.workflow.start('paymentLifecycle', {
            taskQueue,
            workflowId: depositKey(m.deposit),
            args: [depositInput(m), fallback ? { fallback } : {}],
            workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
            workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
          });
        } catch (e) {
          // A re-read block whose deposit already completed its lifecycle: nothing to start, and never a second one.
          if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
        }
      }),
    ),
  );
}

/**
 * The worker process: the Temporal worker (every workflow and activity) on its task queue and, per network whose
 * deposits run on that queue (task-queues.ts), a watcher loop. Watchers of several workers take turns under a
 * per-network lock, so a block is read by one of them at a time; the workflow ID keeps starts unique regardless.
 */
export async function startWorkerRuntime(
  services: Services,
  /**
   * depositPollInterval: the payment workflows' fallback read when no chain signal comes (default 5 minutes);
   * role: `embedded` for the one-process gateway, which serves every network on the gateway's queue.
   */
  opts: { address: string; watch?: boolean; depositPollInterval?: string; role?: 'worker' | 'embedded' },
): Promise<WorkerRuntime> {
  const { cfg, database } = services;
  const serves = workerAssignment(cfg, services.chains, opts.role ?? 'worker');
  exposePaymentStages((stages) => stageTallies(database.db, stages));
  // Public material for the API (xpubs, the callback public key, the Solana address pool), kept fresh.
  const publisher = await startPublisher(
    {
      db: database.db,
      seed: services.seed,
      chains: services.chains,
      publicKeyPem: () => services.signer.publicKeyPem(),
      poolSize: cfg.addressPoolSize,
      withLock: database.withLock,
    },
    10_000,
    (e) => logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'publishing public material failed; retrying'),
  );
  // The head feeds (below) report here too: a forward activity watches for its broadcast's inclusion.
  const heads = headHub(cfg.forwardWatchMs);
  const activities = createActivities({
    db: database.db,
    config: cfg,
    signer: services.signer,
    deposit: {
      withLock: database.withLock,
      adapter: services.adapter,
      prices: services.prices,
      feePolicy: services.feePolicy,
      treasuryAddress: services.treasuryAddress,
      heads,
    },
    minimums: {
      chains: services.chains,
      adapter: services.adapter,
      prices: services.prices,
      maxCostPercent: cfg.minimumMaxCostPercent,
      feePolicy: services.feePolicy,
      refreshMs: cfg.minimumRefreshMs,
    },
  });
  const { worker, connection: workerConnection } = await createWorker({
    address: opts.address,
    namespace: cfg.temporalNamespace,
    taskQueue: serves.taskQueue,
    activities,
  });
  const run = worker.run();
  // The worker's own connection (the SDK's Rust core) also serves the watcher's client calls (workflow
  // starts, hints): one connection fewer, and its gRPC work off this process's JavaScript thread.
  const client = new Client({ connection: workerConnection, namespace: cfg.temporalNamespace });
  // SPEC 2.1, 2.2, 8: the current minimums, recomputed by a Temporal Schedule the operator can see and pause.
  try {
    if (serves.ownsSchedule) await ensureMinimumSchedule(client, { taskQueue: cfg.taskQueue, everyMs: cfg.minimumRefreshMs });
  } catch (e) {
    worker.shutdown();
    await run.catch(() => undefined);
    await workerConnection.close();
    throw e;
  }

  // Hints to the waiting workflows (src/detection/push.ts); one that cannot be delivered (a workflow that
  // ended) is dropped: the workflow's own fallback reading covers it.
  const signal: SignalDeposit = async (workflowId, hint) => {
    await client.workflow
      .getHandle(workflowId)
      .signal(chainSignal, hint)
      .catch((e: unknown) => logger.debug({ workflowId, err: describeError(e) }, 'chain hint not delivered'));
  };
  const sponsors = sponsorAddresses(services.seed);
  const ownSenders = new Set([sponsors.evmGasTank, sponsors.solFeePayer]);
  const watchers =
    opts.watch === false
      ? undefined
      : startWatchers({
          networks: serves.networks,
          adapter: services.adapter,
          db: database.db,
          // Two workers: the one whose pass finds the other one's under way skips it (that one pushes the hints).
          ifFree: database.ifFree,
          intervalMs: cfg.watchIntervalMs,
          feedIntervalMs: cfg.watchFeedIntervalMs,
          // {NETWORK}_WS_URL, or a UTXO node's long poll ({NETWORK}_HEAD_FEED=longpoll): the node's new heads
          // wake the watcher, which then reads the block at once.
          heads: (network, wake, feedLive) => {
            const chain = services.chains[network];
            const onHead = () => {
              wake();
              heads.head(network);
            };
            const feed = {
              onState: (state: 'subscribed' | 'dropped', detail?: string) => {
                heads.live(network, state === 'subscribed');
                feedLive(state === 'subscribed');
                if (state === 'subscribed') logger.info({ network }, 'new-head feed subscribed');
                else logger.warn({ network, detail }, 'new-head feed dropped; polling until it is back');
              },
            };
            if (chain?.headFeed === 'longpoll') return openLongPollFeed(chain.rpcUrl, onHead, feed);
            if (!chain?.wsUrl || !hasHeadFeed(network)) return undefined;
            return openHeadFeed(network, chain.wsUrl, onHead, feed);
          },
          // The gas tank's top-ups to an address_in are the gateway's own money, never a payment.
          onMatch: async (_network, found) => {
            const matches = found.filter((m) => !m.deposit.sender || !ownSenders.has(m.deposit.sender));
            await recordDetectedDeposits(database.db, matches);
            await startDepositWorkflows(client, serves.taskQueue, matches, opts.depositPollInterval);
          },
          onBatch: async (network, before, batch) => void (await pushHints(database.db, network, before, batch, signal)),
          onError: (network, e) => logger.warn({ network, err: describeError(e) }, 'watcher pass failed; retrying'),
        });

  return {
    worker,
    serves,
    async stop() {
      await publisher.stop();
      await watchers?.stop();
      // In-flight activities finish or are handed back to Temporal (their heartbeat/timeout) before exit.
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await run;
      await workerConnection.close();
    },
  };
}
