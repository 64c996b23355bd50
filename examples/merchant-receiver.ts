/**
 * A merchant's callback receiver, as SPEC 5 and 6 ask for it: raw body first, verify the signature and the
 * timestamp, trust the fields only after that, fulfil each confirmed UUID once, answer exactly 200.
 *
 *   GATEWAY_URL=http://127.0.0.1:8080 PORT=9000 npx tsx examples/merchant-receiver.ts
 */
import express, { type Request, type Response } from 'express';
import { verifyCallback } from '../src/callbacks/verify';

export interface ReceivedCallback {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  verified: boolean;
  fields?: Record<string, unknown>;
}

export interface ReceiverOptions {
  /** The gateway's public key (GET /api/pubkey); a function is called again once when verification fails (rotation). */
  publicKey: string | (() => Promise<string>);
  /** Checks an order reference and coin before fulfilment; default accepts every verified confirmed callback. */
  accept?: (fields: Record<string, unknown>) => boolean;
  now?: () => number;
}

/** Fields by transport: JSON body, form body, or the GET query. Called only after verification. */
function parseFields(req: Request, raw: Buffer): Record<string, unknown> {
  const type = String(req.headers['content-type'] ?? '');
  if (req.method === 'POST' && type.startsWith('application/json')) return JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  const text = req.method === 'POST' ? raw.toString('utf8') : req.originalUrl.split('?')[1] ?? '';
  return Object.fromEntries(new URLSearchParams(text));
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
    const fields = parseFields(req, rawBody);
    entry.fields = fields;
    const confirmed = fields.result === 'sent' && String(fields.pending) === '0';
    const uuid = String(fields.uuid ?? '');
    if (confirmed && uuid && !fulfilled.has(uuid)) {
      if (opts.accept && !opts.accept(fields)) {
        res.status(422).type('text/plain').send('unexpected order or coin');
        return;
      }
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
  const { app, fulfilled } = createMerchantReceiver({ publicKey: fetchKey });
  const server = app.listen(port, () => {
    const address = server.address();
    console.log(`merchant receiver on :${typeof address === 'object' && address ? address.port : port}, verifying with ${gateway}/api/pubkey`);
  });
  process.on('SIGINT', () => {
    console.log(`fulfilled ${fulfilled.size} payment(s)`);
    server.close(() => process.exit(0));
  });
}
