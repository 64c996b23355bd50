import { ASSETS } from '../../src/domain/assets';
import { formatUnits, parseUnits } from '../../src/domain/money';
import type { DrillChains } from './drill-chains';
import type { DrillConfig } from './drill-verdict';
import type { OrderBook } from './order-book';

/** The drill's configurations: two or more per ticker, one paid exactly its published minimum, one paid by a contract. */

export async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    const body = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    return { status: res.status, body };
  } catch {
    return { status: 0, body: undefined };
  }
}

type Catalog = Record<string, { minimum?: string | null }> | undefined;
const catalogOf = async (base: string) => (await getJson(`${base}/cryptocurrencies`)).body as Catalog;
/** `eth 0.001, ltc 0.001, …`: minimums as a drill stage tells them. */
export const shownMinimums = (tickers: readonly string[], minimums: Record<string, bigint>) =>
  tickers.map((t) => `${t} ${formatUnits(minimums[t], ASSETS[t].decimals)}`).join(', ');

/** Each ticker's published minimum as a customer reads it, once every one of them is published. */
export async function readMinimums(
  base: string,
  tickers: readonly string[],
  until: (pred: () => Promise<boolean>, ms: number, what: string) => Promise<void>,
): Promise<Record<string, bigint>> {
  const minimums: Record<string, bigint> = {};
  await until(async () => {
    const catalog = await catalogOf(base);
    for (const t of tickers) {
      const m = catalog?.[t]?.minimum;
      if (m) minimums[t] = parseUnits(m, ASSETS[t].decimals);
    }
    return tickers.every((t) => minimums[t] !== undefined);
  }, 180_000, 'every published minimum');
  return minimums;
}

/**
 * Tells each change of the published minimums while the drill runs: they move with live fees, and every
 * worker's start refreshes them. Returns its stop.
 */
export function watchMinimums(base: string, tickers: readonly string[], first: Record<string, bigint>, stage: (s: string) => void): () => Promise<void> {
  let watching = true;
  const watch = (async () => {
    let last = shownMinimums(tickers, first);
    while (watching) {
      await new Promise((r) => setTimeout(r, 1000));
      const catalog = await catalogOf(base);
      if (!catalog) continue;
      const now = tickers.map((t) => `${t} ${catalog[t]?.minimum ?? 'null'}`).join(', ');
      if (now !== last) stage(`published minimums now ${now}`);
      last = now;
    }
  })();
  return async () => {
    watching = false;
    await watch;
  };
}

interface Shop {
  base: string;
  orders: OrderBook;
  chains: DrillChains;
  merchantUrl: string;
}

/** One configuration of `ticker` for the merchant's order `${ticker}-${name}`, in the shop's order book. */
async function create(shop: Shop, ticker: string, name: string, fields: Record<string, number>): Promise<DrillConfig> {
  const order = `${ticker}-${name}`;
  const callbackUrl = `${shop.merchantUrl}/drill/${ticker}/${name}?order=${order}`;
  const addressOut = await shop.chains.payoutAddress(ticker);
  const res = await fetch(`${shop.base}/${ticker}/create`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ callback_url: callbackUrl, address_out: addressOut, post: 1, json: 1, ...fields }),
  });
  const body = (await res.json()) as Record<string, string>;
  if (res.status !== 200) throw new Error(`drill: create ${order} → ${res.status} ${JSON.stringify(body)}`);
  shop.orders.add(callbackUrl, ticker, body);
  return { ticker, callbackUrl, addressIn: body.address_in, addressOut, deposits: [] };
}

/**
 * `configsPerTicker` configurations per ticker (pending callbacks on every other one; the confirmations
 * overridden on the chains that count them), one per ticker for its published minimum, and one ETH
 * configuration paid by a contract (the ether reaches address_in by an internal call).
 */
export async function createDrillConfigs(shop: Shop, tickers: readonly string[], configsPerTicker: number) {
  const configs: DrillConfig[] = [];
  for (const ticker of tickers) {
    const network = ASSETS[ticker].network;
    const confirmations: Record<string, number> = network === 'solana' ? {} : { confirmations: network === 'litecoin' ? 2 : 3 };
    for (let i = 0; i < configsPerTicker; i++) configs.push(await create(shop, ticker, String(i), { pending: i % 2, ...confirmations }));
  }
  const minimumConfigs: DrillConfig[] = [];
  for (const ticker of tickers) minimumConfigs.push(await create(shop, ticker, 'minimum', { pending: 1 }));
  configs.push(...minimumConfigs);
  const contractConfig = tickers.includes('eth') ? await create(shop, 'eth', 'contract', { pending: 1 }) : undefined;
  if (contractConfig) configs.push(contractConfig);
  return { configs, minimumConfigs, contractConfig };
}
