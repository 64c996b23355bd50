import { ApplicationFailure, Context } from '@temporalio/activity';
import { eq } from 'drizzle-orm';
import type { ChainAdapter } from '../src/chains/adapter';
import { tokenContract, type ChainRuntimeConfig } from '../src/chains/config';
import type { Db } from '../src/db/client';
import { depositMinimumState, recordComputed, recordUnavailable, setPinned } from '../src/db/queries/minimums';
import type { ConfigRow } from '../src/db/queries/payments';
import { assets } from '../src/db/schema';
import { ASSETS, NETWORKS, findAsset, type Asset } from '../src/domain/assets';
import type { FeePolicy } from '../src/domain/fees';
import { depositMinimum, minimumFloor, publishedMinimum } from '../src/domain/minimum';
import { formatUnits, parseUnits } from '../src/domain/money';
import { nativeCostInAsset } from '../src/domain/network-cost';
import { logger } from '../src/observability/logger';
import { scrubText } from '../src/observability/redact';
import type { PriceSource } from '../src/prices/source';
import { priceOfNativeInAsset } from './fee-inputs';

/** The side effects of workflows/minimums.ts: recompute the current minimums, and the operator's pin. */

export interface MinimumDeps {
  db: Db;
  chains: ChainRuntimeConfig;
  adapter(network: string): Promise<ChainAdapter>;
  prices: PriceSource;
  /** MINIMUM_MAX_COST_PERCENT with two decimals: the forwarding cost's largest share of the minimum. */
  maxCostPercent: string;
  /** The fee tiers and domain overrides: the minimum holds under every percentage the gateway can apply. */
  feePolicy: FeePolicy;
  /**
   * MINIMUM_REFRESH_MS: how long a stated figure a higher one replaced stays honoured for deposits (a
   * customer may have read it just before the change).
   */
  refreshMs: number;
  /** Bound on one asset's estimate, so one node that hangs never holds up the other assets. */
  estimateTimeoutMs?: number;
}

/** What a refresh did, per ticker: the figure written (decimal string) or why there is none now. */
export interface RefreshReport {
  computed: Record<string, string>;
  unavailable: Record<string, string>;
}

/** A minimum cannot be computed now; the message is safe to store and show (no node URL, no credentials). */
class Unavailable extends Error {
  /** A node that did not answer within the timeout is not asked again in the same refresh. */
  constructor(
    message: string,
    readonly askAgain = true,
  ) {
    super(message);
  }
}

/**
 * A node's refusal or a dropped connection is often gone a moment later: the asset is asked again after
 * these pauses before it is shown without a minimum until the next scheduled refresh (MINIMUM_REFRESH_MS).
 */
const PAUSES_BEFORE_ASKING_AGAIN_MS = [2_000, 5_000];

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Unavailable(`no fee estimate within ${ms} ms`, false)), ms);
    // A call the node never answers must not keep a stopping worker process alive.
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

export function createMinimumActivities(deps: MinimumDeps) {
  const timeoutMs = deps.estimateTimeoutMs ?? 30_000;

  /** Enabled and its network configured (a token also needs its contract): the assets the catalog lists. */
  async function servedAssets(): Promise<Asset[]> {
    const disabled = new Set((await deps.db.select().from(assets).where(eq(assets.enabled, false))).map((r) => r.ticker));
    return Object.values(ASSETS).filter((a) => {
      const rt = Object.prototype.hasOwnProperty.call(deps.chains, a.network) ? deps.chains[a.network] : undefined;
      if (!rt || disabled.has(a.ticker) || !a.enabledByDefault) return false;
      return a.type === 'native' || tokenContract(a, rt) !== undefined;
    });
  }

  /** Every fee percentage a payment of `a` can be charged: the asset default, each tier, each domain override. */
  const feePercents = (a: Asset): string[] => [a.feePercent, ...deps.feePolicy.tiers.map((t) => t.feePercent), ...Object.values(deps.feePolicy.domainOverrides)];

  /**
   * The network's live cost of one forward at the default priority, in base units of the asset itself, and
   * the smallest payout the chain takes at address_out.
   */
  async function forwardCost(a: Asset): Promise<{ cost: bigint; payoutFloor: bigint }> {
    let estimate;
    try {
      const adapter = await deps.adapter(a.network);
      // Read now: a fee reading shared from before the refresh could predate the block that changed the fee.
      estimate = await adapter.estimateForwardCost(a.ticker, 'default', { fresh: true });
    } catch (e) {
      if (e instanceof Unavailable) throw e;
      logger.warn({ ticker: a.ticker, err: e instanceof Error ? e.name : 'error' }, 'minimum refresh: no fee estimate');
      throw new Unavailable(`no fee estimate from the ${NETWORKS[a.network].name} node`);
    }
    let cost = estimate.networkFee;
    if (estimate.sponsorCost > 0n) {
      // Gas top-up (ERC-20) or fee payer and rent (SPL), paid in the native coin, recovered in the token.
      const price = await priceOfNativeInAsset(deps.prices, a);
      if (price === undefined) throw new Unavailable(`no price to convert the ${NETWORKS[a.network].name} network cost into ${a.symbol}`);
      cost += nativeCostInAsset(a, estimate.sponsorCost, price);
    }
    return { cost, payoutFloor: estimate.payoutFloor ?? 0n };
  }

  /** The asset's forward cost, asked again after a pause while the node fails fast. */
  async function forwardCostAskingAgain(a: Asset): Promise<{ cost: bigint; payoutFloor: bigint }> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await withTimeout(forwardCost(a), timeoutMs);
      } catch (e) {
        if (!(e instanceof Unavailable) || !e.askAgain || attempt >= PAUSES_BEFORE_ASKING_AGAIN_MS.length) throw e;
        await pause(PAUSES_BEFORE_ASKING_AGAIN_MS[attempt]);
      }
    }
  }

  /** Each served asset's figure, or why there is none now; the assets' nodes are asked in parallel. */
  async function refreshAll(): Promise<RefreshReport> {
    const report: RefreshReport = { computed: {}, unavailable: {} };
    const served = await servedAssets();
    await Promise.all(
      served.map(async (a) => {
        try {
          const { cost, payoutFloor } = await forwardCostAskingAgain(a);
          const value = publishedMinimum({ networkFee: cost, payoutFloor, feePercents: feePercents(a), maxCostPercent: deps.maxCostPercent, floor: minimumFloor(a) });
          await recordComputed(deps.db, a.ticker, value, deps.refreshMs);
          report.computed[a.ticker] = formatUnits(value, a.decimals);
        } catch (e) {
          if (!(e instanceof Unavailable)) throw e;
          // Stored and returned into the history: scrubbed of URLs (an RPC error may name its node).
          await recordUnavailable(deps.db, a.ticker, scrubText(e.message));
          report.unavailable[a.ticker] = scrubText(e.message);
        }
      }),
    );
    return report;
  }

  return {
    /**
     * Run by the `minimum-refresh` schedule: every served asset's minimum from live fees and prices. Ends as
     * soon as it is cancelled, so a worker shutting down never waits for a slow node; the next run redoes it.
     */
    async refreshMinimums(): Promise<RefreshReport> {
      return Promise.race([refreshAll(), Context.current().cancelled]);
    },

    /** The operator's pin (`npm run admin -- minimum set|clear`); value null clears it. */
    async pinMinimum(input: { ticker: string; value: string | null }): Promise<{ ticker: string; pinned: string | null }> {
      const a = findAsset(input.ticker);
      if (!a) throw ApplicationFailure.nonRetryable(`unknown ticker ${input.ticker.slice(0, 64)}`, 'InvalidPin');
      if (input.value === null) {
        await setPinned(deps.db, a.ticker, null, deps.refreshMs);
        return { ticker: a.ticker, pinned: null };
      }
      let value: bigint;
      try {
        value = parseUnits(input.value, a.decimals);
      } catch (e) {
        throw ApplicationFailure.nonRetryable(`${a.ticker} minimum: ${(e as Error).message}`, 'InvalidPin');
      }
      if (value < minimumFloor(a)) {
        throw ApplicationFailure.nonRetryable(`${a.ticker} minimum may not be below the registry floor ${formatUnits(minimumFloor(a), a.decimals)}`, 'InvalidPin');
      }
      await setPinned(deps.db, a.ticker, value, deps.refreshMs);
      return { ticker: a.ticker, pinned: formatUnits(value, a.decimals) };
    },
  };
}

export type MinimumActivities = ReturnType<typeof createMinimumActivities>;

/** The minimum an observed deposit is held to now (depositMinimum), from the stored asset_minimums row. */
export async function minimumFor(db: Db, _config: ConfigRow, a: Asset): Promise<bigint | undefined> {
  return depositMinimum(await depositMinimumState(db, a.ticker), a);
}
