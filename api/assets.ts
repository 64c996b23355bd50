import { eq } from 'drizzle-orm';
import { tokenContract, type NetworkRuntime, type ChainRuntimeConfig } from '../src/chains/config';
import { DEFAULT_MINIMUM_REFRESH_MS } from '../src/config';
import type { Db } from '../src/db/client';
import { minimumStates } from '../src/db/queries/minimums';
import { assets as assetsTable } from '../src/db/schema';
import { ASSETS, findAsset, networkOf, type Asset, type Network } from '../src/domain/assets';
import { GatewayError } from '../src/domain/errors';
import { requiredConfirmations } from '../src/domain/finality';
import { minimumFloor, viewMinimum, type MinimumState } from '../src/domain/minimum';
import { formatDecimal, formatUnits } from '../src/domain/money';

type AssetRow = typeof assetsTable.$inferSelect;

/** An asset as the public API sees it: registry facts, operator state and the network's runtime. */
export interface AssetView {
  asset: Asset;
  network: Network;
  /** undefined when the network is not configured in this deployment. */
  runtime: NetworkRuntime | undefined;
  enabled: boolean;
  /** Current processing minimum in base units; null while the current figure is unavailable. */
  minimumBase: bigint | null;
  /** The minimum where a decimal string is required (info, create): the current one, else the last, else the floor. */
  minimumStated: bigint;
  /** Public default fee percentage, two decimals. */
  feePercent: string;
}

function view(asset: Asset, row: AssetRow | undefined, minimum: MinimumState | undefined, chains: ChainRuntimeConfig, refreshMs: number): AssetView {
  const network = networkOf(asset);
  const m = viewMinimum(minimum, minimumFloor(asset), refreshMs);
  return {
    asset,
    network,
    runtime: servedRuntime(asset, network.id, chains),
    enabled: row ? row.enabled : asset.enabledByDefault,
    minimumBase: m.current,
    minimumStated: m.stated,
    feePercent: formatDecimal(row?.feePercent ?? asset.feePercent, 2),
  };
}

/** The network's runtime, when it is configured and (for a token) knows the token's contract or mint. */
function servedRuntime(asset: Asset, networkId: string, chains: ChainRuntimeConfig): NetworkRuntime | undefined {
  const rt = Object.prototype.hasOwnProperty.call(chains, networkId) ? chains[networkId] : undefined;
  if (!rt || (asset.type === 'token' && !tokenContract(asset, rt))) return undefined;
  return rt;
}

/** Operator state of the assets as read at one moment: the assets rows and the stored minimums, by ticker. */
export interface AssetState {
  rows: Map<string, AssetRow>;
  minimums: Map<string, MinimumState>;
}

/** Reads the operator state of every asset (two small tables; `ticker` narrows both to one asset). */
export async function readAssetState(db: Db, ticker?: string): Promise<AssetState> {
  const rowsQuery = ticker === undefined ? db.select().from(assetsTable) : db.select().from(assetsTable).where(eq(assetsTable.ticker, ticker));
  const [rows, minimums] = await Promise.all([rowsQuery, minimumStates(db, ticker)]);
  return { rows: new Map(rows.map((r) => [r.ticker, r])), minimums };
}

/** Every registry asset with its state, in registry order. */
export function assetViews(state: AssetState, chains: ChainRuntimeConfig, refreshMs: number): AssetView[] {
  return Object.values(ASSETS).map((a) => view(a, state.rows.get(a.ticker), state.minimums.get(a.ticker), chains, refreshMs));
}

/** Every registry asset with its state as the database holds it now, in registry order. */
export async function allAssetViews(db: Db, chains: ChainRuntimeConfig, refreshMs: number): Promise<AssetView[]> {
  return assetViews(await readAssetState(db), chains, refreshMs);
}

/** Enabled and its network configured: what the catalog lists and create accepts. */
export const isServed = (v: AssetView) => v.enabled && v.runtime !== undefined;

/**
 * The asset of a path ticker. 1101 for an unknown ticker (or one this deployment has no network for),
 * 1102 for a known asset the operator disabled. `servedOnly: false` (logs) accepts any known asset.
 * `refreshMs` (MINIMUM_REFRESH_MS) dates the minimum; routes that show no minimum may leave it out.
 */
export async function resolveAsset(
  db: Db,
  chains: ChainRuntimeConfig,
  ticker: string,
  opts: { servedOnly: boolean; refreshMs?: number } = { servedOnly: true },
): Promise<AssetView> {
  const asset = knownAsset(ticker);
  const state = await readAssetState(db, asset.ticker);
  return served(view(asset, state.rows.get(asset.ticker), state.minimums.get(asset.ticker), chains, opts.refreshMs ?? DEFAULT_MINIMUM_REFRESH_MS), opts.servedOnly);
}

/** The registry asset of a path ticker, or 1101. */
export function knownAsset(ticker: string): Asset {
  const asset = findAsset(ticker);
  if (!asset) throw new GatewayError(1101, `Unknown ticker "${ticker.slice(0, 64)}". Use a ticker from GET /api/cryptocurrencies.`);
  return asset;
}

/** The view itself when the route may use it: 1102 for a disabled asset, 1101 for an unconfigured network. */
export function served(v: AssetView, servedOnly: boolean): AssetView {
  if (!servedOnly) return v;
  if (!v.enabled) throw new GatewayError(1102, `The asset ${v.asset.ticker} is currently disabled.`);
  if (!v.runtime) throw new GatewayError(1101, `The ${v.network.name} network is not configured on this gateway.`);
  return v;
}

/** The minimum as a decimal string at the asset's precision, or null when unavailable. */
export function minimumText(v: AssetView): string | null {
  return v.minimumBase === null ? null : formatUnits(v.minimumBase, v.asset.decimals);
}


/** Merchant-facing confirmation requirement: the asset's default (1, final, where only finality shows). */
export function confirmationsRequired(v: AssetView): number {
  return requiredConfirmations(v.network.id, v.asset.confirmations);
}
