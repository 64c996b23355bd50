import { eq } from 'drizzle-orm';
import { tokenContract, type NetworkRuntime, type ChainRuntimeConfig } from '../src/chains/config';
import type { Db } from '../src/db/client';
import { assets as assetsTable } from '../src/db/schema';
import { ASSETS, findAsset, networkOf, type Asset, type Network } from '../src/domain/assets';
import { GatewayError } from '../src/domain/errors';
import { formatDecimal, formatUnits, parseUnits } from '../src/domain/money';

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
  /** Public default fee percentage, two decimals. */
  feePercent: string;
}

function view(asset: Asset, row: AssetRow | undefined, chains: ChainRuntimeConfig): AssetView {
  const network = networkOf(asset);
  const floor = parseUnits(asset.minimumFloor, asset.decimals);
  let minimumBase: bigint | null;
  // No operator row yet: the registry floor is the minimum. A row whose figure is null: unavailable.
  if (!row) minimumBase = floor;
  else if (row.minimumBase === null) minimumBase = null;
  else minimumBase = BigInt(row.minimumBase) > floor ? BigInt(row.minimumBase) : floor;
  return {
    asset,
    network,
    runtime: servedRuntime(asset, network.id, chains),
    enabled: row ? row.enabled : asset.enabledByDefault,
    minimumBase,
    feePercent: formatDecimal(row?.feePercent ?? asset.feePercent, 2),
  };
}

/** The network's runtime, when it is configured and (for a token) knows the token's contract or mint. */
function servedRuntime(asset: Asset, networkId: string, chains: ChainRuntimeConfig): NetworkRuntime | undefined {
  const rt = Object.prototype.hasOwnProperty.call(chains, networkId) ? chains[networkId] : undefined;
  if (!rt || (asset.type === 'token' && !tokenContract(asset, rt))) return undefined;
  return rt;
}

/** Every registry asset with its state, in registry order. */
export async function allAssetViews(db: Db, chains: ChainRuntimeConfig): Promise<AssetView[]> {
  const rows = await db.select().from(assetsTable);
  const byTicker = new Map(rows.map((r) => [r.ticker, r]));
  return Object.values(ASSETS).map((a) => view(a, byTicker.get(a.ticker), chains));
}

/** Enabled and its network configured: what the catalog lists and create accepts. */
export const isServed = (v: AssetView) => v.enabled && v.runtime !== undefined;

/**
 * The asset of a path ticker. 1101 for an unknown ticker (or one this deployment has no network for),
 * 1102 for a known asset the operator disabled. `servedOnly: false` (logs) accepts any known asset.
 */
export async function resolveAsset(
  db: Db,
  chains: ChainRuntimeConfig,
  ticker: string,
  opts: { servedOnly: boolean } = { servedOnly: true },
): Promise<AssetView> {
  const asset = findAsset(ticker);
  if (!asset) throw new GatewayError(1101, `Unknown ticker "${ticker.slice(0, 64)}". Use a ticker from GET /api/cryptocurrencies.`);
  const [row] = await db.select().from(assetsTable).where(eq(assetsTable.ticker, asset.ticker));
  const v = view(asset, row, chains);
  if (!opts.servedOnly) return v;
  if (!v.enabled) throw new GatewayError(1102, `The asset ${asset.ticker} is currently disabled.`);
  if (!v.runtime) throw new GatewayError(1101, `The ${v.network.name} network is not configured on this gateway.`);
  return v;
}

/** The minimum as a decimal string at the asset's precision, or null when unavailable. */
export function minimumText(v: AssetView): string | null {
  return v.minimumBase === null ? null : formatUnits(v.minimumBase, v.asset.decimals);
}

/** The minimum to state where the spec requires a decimal string: the current one, else the floor. */
export function minimumOrFloor(v: AssetView): bigint {
  return v.minimumBase ?? parseUnits(v.asset.minimumFloor, v.asset.decimals);
}

/** Merchant-facing confirmation requirement: the sol family reports finality as 1. */
export function confirmationsRequired(v: AssetView): number {
  return v.network.family === 'sol' ? 1 : v.asset.confirmations;
}
