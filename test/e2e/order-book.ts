import type { ExpectedPayment } from '../../src/callbacks/verify';

/**
 * The end-to-end shop's order book for examples/merchant-receiver.ts: every configuration a test creates,
 * by its callback URL, with the address_in its create answered and its ticker; a URL created for several
 * tickers of a family (the same configuration and address_in) accepts each of them. A callback's request
 * target is the callback URL's path and query, with the fields appended to the query for GET callbacks.
 */
export class OrderBook {
  private readonly byTarget = new Map<string, ExpectedPayment[]>();

  add(callbackUrl: string, ticker: string, created: Record<string, unknown>): void {
    const u = new URL(callbackUrl);
    const target = `${u.pathname}${u.search}`;
    const orders = this.byTarget.get(target) ?? [];
    orders.push({ addressIn: String(created.address_in), coin: ticker });
    this.byTarget.set(target, orders);
  }

  readonly orderOf = (target: string): ExpectedPayment[] | undefined => {
    let best: string | undefined;
    for (const key of this.byTarget.keys()) {
      const fits = target === key || target.startsWith(`${key}${key.includes('?') ? '&' : '?'}`);
      if (fits && (best === undefined || key.length > best.length)) best = key;
    }
    return best === undefined ? undefined : this.byTarget.get(best);
  };
}
