/**
 * A merchant's callback receiver, as SPEC 5 and 6 ask for it: raw body first, verify the signature and the
 * timestamp, trust the fields only after that, check that address_in and coin are the ones the shop stored
 * for the order its callback URL names, fulfil each confirmed UUID once, answer exactly 200.
 *
 * The order check is what stops a squat: anyone can create a configuration with the shop's callback URL (or a
 * spelling of it that arrives the same) and their own payout, and the gateway signs its callbacks too.
 *
 *   GATEWAY_URL=http://127.0.0.1:8080 PORT=9000 ORDERS='{"1001":{"addressIn":"bc1q…","coin":"btc"}}' \
 *     npx tsx examples/merchant-receiver.ts
 */
import express, { type Request, type Response } from 'express';
import { callbackFields, checkPayment, verifyCallback, type ExpectedPayment } from '../src/callbacks/verify';

export interface ReceivedCallback {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  /** The signature and timestamp verified. */
  verified: boolean;
  /** Why a verified callback was refused: no such order, or another address_in or coin than the order's. */
  refused?: string;
  fields?: Record<string, unknown>;
}

export interface ReceiverOptions {
  /** The gateway's public key (GET /api/pubkey); a function is called again once when verification fails (rotation). */
  publicKey: string | (() => Promise<string>);
  /**
   * The shop's order for a request target (found by the shop's own reference in its callback URL): the
   * address_in and coin its create response gave, or one per ticker when the order accepts several (one
   * create per ticker with the same callback URL: the same address_in within a family). A callback for no
   * known order, or carrying another address_in or coin, is refused and fulfils nothing.
   */
  orderOf: (target: string) => ExpectedPayment | readonly ExpectedPayment[] | undefined;
  now?: () => number;
}

/** The `order` parameter of a request target: the reference this example's shop puts in its callback URLs. */
export function orderReference(target: string): string | null {
  return new URLSearchParams(target.split('?')[1] ?? '').get('order');
}

/** Accepted when one of the order's payments matches; else the nearest miss (its address_in, another coin). */
function orderFailure(failures: Array<string | null>): string | null {
  if (failures.includes(null)) return null;
  return failures.includes('wrong-coin') ? 'wrong-coin' : failures[0];
}

export function createMerchantReceiver(opts: ReceiverOptions) {
  const received: ReceivedCallback[] = [];
  /** Fulfilled orders by payment UUID: the merchant's "once per confirmed UUID" ledger. */
  const fulfilled = new Map<string, Record<string, unknown>>();
  let key: string | undefined = typeof opts.publicKey === 'string' ? opts.publicKey : undefined;
  const currentKey = async (refresh: boolean): Promise<string> => {
    if (typeof opts.publicKey === 'string') return opts.publicKey;
    if (!key || refresh) key = await opts.publicKey();
    return key;
  };

  const app = express();
  // Rule 1: the raw bytes, before any parser touches them, for every content type.
  app.use(express.raw({ type: () => true, limit: '64kb' }));
  app.all('/{*path}', async (req: Request, res: Response) => {
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const request = { method: req.method, url: req.originalUrl, headers: req.headers, rawBody };
    const now = opts.now?.() ?? Date.now();
    let result = verifyCallback(request, await currentKey(false), now);
    // Rule 5: an unexpected signature failure may mean a rotated key; refetch once, never bypass.
    if (!result.ok && result.reason === 'bad-signature' && typeof opts.publicKey !== 'string') {
      result = verifyCallback(request, await currentKey(true), now);
    }
    const entry: ReceivedCallback = { method: req.method, url: req.originalUrl, headers: { ...req.headers }, rawBody, verified: result.ok };
    received.push(entry);
    if (!result.ok) {
      res.status(401).type('text/plain').send(`rejected: ${result.reason}`);
      return;
    }
    const order = [opts.orderOf(req.originalUrl) ?? []].flat();
    if (order.length === 0) {
      entry.refused = 'unknown order';
      res.status(404).type('text/plain').send('rejected: unknown order');
      return;
    }
    // Fields by transport (GET query, form or JSON body), read only now that the signature holds.
    const fields = callbackFields(request);
    const wrong = fields ? orderFailure(order.map((o) => checkPayment(fields, o))) : 'bad-fields';
    if (!fields || wrong) {
      // Genuinely signed, but for another configuration than the order's: its payment went to another payout.
      entry.refused = wrong ?? 'bad-fields';
      res.status(401).type('text/plain').send(`rejected: ${wrong ?? 'bad-fields'}`);
      return;
    }
    entry.fields = fields;
    const confirmed = fields.result === 'sent' && String(fields.pending) === '0';
    const uuid = String(fields.uuid ?? '');
    if (confirmed && uuid && !fulfilled.has(uuid)) {
      // A real shop does this in one database transaction keyed by uuid (unique), then ships the order.
      fulfilled.set(uuid, fields);
    }
    // Pending callbacks are informational and repeated confirmed ones are duplicates: both get 200.
    res.status(200).type('text/plain').send('ok');
  });
  return { app, received, fulfilled };
}

if (require.main === module) {
  const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';
  const port = Number(process.env.PORT ?? 9000);
  const fetchKey = async () => {
    const res = await fetch(`${gateway}/api/pubkey`);
    if (!res.ok) throw new Error(`GET /api/pubkey answered ${res.status}`);
    return res.text();
  };
  // The shop's order book: reference → what the create response gave (address_in) for that coin.
  const orders = JSON.parse(process.env.ORDERS ?? '{}') as Record<string, ExpectedPayment>;
  const orderOf = (target: string) => {
    const reference = orderReference(target);
    return reference !== null && Object.hasOwn(orders, reference) ? orders[reference] : undefined;
  };
  const { app, fulfilled } = createMerchantReceiver({ publicKey: fetchKey, orderOf });
  const server = app.listen(port, () => {
    const address = server.address();
    console.log(`merchant receiver on :${typeof address === 'object' && address ? address.port : port}, verifying with ${gateway}/api/pubkey`);
  });
  process.on('SIGINT', () => {
    console.log(`fulfilled ${fulfilled.size} payment(s)`);
    server.close(() => process.exit(0));
  });
}
