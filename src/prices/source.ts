/**
 * Where the confirmed-time USDT price comes from. A missing or invalid quote is `undefined`: the callback
 * then omits price and conversion fields (SPEC 6 rule 6), never sends 0 or null.
 */
export interface PriceSource {
  /** Price of one unit of `symbol` in USDT as a positive decimal string, or undefined when unavailable. */
  usdt(symbol: string): Promise<string | undefined>;
}

const POSITIVE_DECIMAL = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;

export function validPrice(p: unknown): string | undefined {
  if (typeof p !== 'string' || !POSITIVE_DECIMAL.test(p) || /^0(\.0+)?$/.test(p)) return undefined;
  return p;
}

/** PRICE_SOURCE=none: no quote ever; callbacks omit price and conversions, priced network costs wait. */
export class NoPriceSource implements PriceSource {
  async usdt(): Promise<string | undefined> {
    return undefined;
  }
}

/** The embedded default's local quotes: fixed, so devnet runs are reproducible. */
export class FixedPriceSource implements PriceSource {
  constructor(private readonly prices: Record<string, string>) {}

  async usdt(symbol: string): Promise<string | undefined> {
    return validPrice(this.prices[symbol.toUpperCase()]);
  }
}

export const DEVNET_PRICES: Record<string, string> = {
  BTC: '65000.00', LTC: '80.00', BCH: '350.00', DOGE: '0.15', ZEC: '30.00', ETH: '3000.00', SOL: '150.00', USDT: '1.00', USDC: '1.00',
};

/**
 * A configurable HTTP quote source for production: GET `{urlTemplate with {symbol}}` answering JSON with a
 * decimal-string field `price` (or a number, converted through its string form). Any failure → undefined.
 */
export class HttpPriceSource implements PriceSource {
  constructor(
    private readonly urlTemplate: string,
    private readonly timeoutMs = 5000,
  ) {}

  async usdt(symbol: string): Promise<string | undefined> {
    const url = this.urlTemplate.replace('{symbol}', encodeURIComponent(symbol.toUpperCase()));
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(this.timeoutMs), redirect: 'error' });
      if (res.status !== 200) return undefined;
      const body = (await res.json()) as { price?: unknown };
      const raw = typeof body.price === 'number' && Number.isFinite(body.price) ? String(body.price) : body.price;
      return validPrice(raw);
    } catch {
      return undefined;
    }
  }
}
