import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMerchantReceiver } from '../../examples/merchant-receiver';
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

/**
 * The shop the end-to-end runs pay into: examples/merchant-receiver.ts on a local port, verifying with
 * `publicKey` against an empty order book; `stops` gets its closing.
 */
export async function startShop(publicKey: string, stops: Array<() => Promise<void>>) {
  const orders = new OrderBook();
  const merchant = createMerchantReceiver({ publicKey, orderOf: orders.orderOf });
  const merchantServer = http.createServer(merchant.app);
  await new Promise<void>((r) => merchantServer.listen(0, '127.0.0.1', () => r()));
  stops.push(() => new Promise<void>((r) => { merchantServer.closeAllConnections(); merchantServer.close(() => r()); }));
  const merchantUrl = `http://127.0.0.1:${(merchantServer.address() as AddressInfo).port}`;
  return { orders, merchant, merchantUrl };
}
