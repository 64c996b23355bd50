import type { ChainRuntimeConfig } from '../src/chains/config';
import type { Db } from '../src/db/client';
import { allAssetViews, assetViews, knownAsset, readAssetState, resolveAsset, served, type AssetState, type AssetView } from './assets';

/**
 * How long the production API serves the operator's asset state (enabled, fee, stored minimums) from
 * memory before reading it again. Every catalog, info, create and logs request needs it; reading it per
 * request was two queries each. An operator's change (disable an asset, pin a minimum, a refresh) shows
 * within this time; a minimum's age is judged as of the read, at most this much early.
 */
export const ASSET_STATE_TTL_MS = 1_000;

interface Snapshot {
  at: number;
  state: AssetState;
  /** Views computed from `state`, per chains object and refresh interval (the deployment's are fixed). */
  views: Map<ChainRuntimeConfig, { refreshMs: number; list: AssetView[]; byTicker: Map<string, AssetView> }>;
}

/**
 * The asset state read at most once per `ttlMs`, by one query at a time (concurrent requests share it).
 * A failed read is not cached: the request answers 1501 and the next one reads again.
 */
export class AssetStateCache {
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;

  constructor(
    private readonly db: Db,
    private readonly ttlMs = ASSET_STATE_TTL_MS,
  ) {}

  private async fresh(): Promise<Snapshot> {
    const s = this.snapshot;
    if (s && performance.now() - s.at < this.ttlMs) return s;
    this.loading ??= readAssetState(this.db)
      .then((state) => (this.snapshot = { at: performance.now(), state, views: new Map() }))
      .finally(() => (this.loading = undefined));
    return this.loading;
  }

  async views(chains: ChainRuntimeConfig, refreshMs: number): Promise<{ list: AssetView[]; byTicker: Map<string, AssetView> }> {
    const s = await this.fresh();
    let v = s.views.get(chains);
    if (!v || v.refreshMs !== refreshMs) {
      const list = assetViews(s.state, chains, refreshMs);
      v = { refreshMs, list, byTicker: new Map(list.map((x) => [x.asset.ticker, x])) };
      s.views.set(chains, v);
    }
    return v;
  }
}

/** What the route helpers below read of the API's dependencies (api/deps.ts's PublicDeps). */
type AssetDeps = { db: Db; chains: ChainRuntimeConfig; config: { minimumRefreshMs: number }; assetCache?: AssetStateCache };

/** Every asset view for a route: from the deployment's cache when it has one, else read now. */
export async function routeAssetViews(deps: AssetDeps): Promise<AssetView[]> {
  if (deps.assetCache) return (await deps.assetCache.views(deps.chains, deps.config.minimumRefreshMs)).list;
  return allAssetViews(deps.db, deps.chains, deps.config.minimumRefreshMs);
}

/** resolveAsset (1101, 1102) through the deployment's cache when it has one. */
export async function routeAsset(deps: AssetDeps, ticker: string, opts: { servedOnly: boolean }): Promise<AssetView> {
  if (!deps.assetCache) return resolveAsset(deps.db, deps.chains, ticker, { ...opts, refreshMs: deps.config.minimumRefreshMs });
  const asset = knownAsset(ticker);
  const { byTicker } = await deps.assetCache.views(deps.chains, deps.config.minimumRefreshMs);
  return served(byTicker.get(asset.ticker)!, opts.servedOnly);
}
