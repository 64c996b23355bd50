/**
 * Verifies the gateway's signed merchant callbacks (SPEC 5). Standalone: Node >= 18 built-ins only, so a
 * merchant can copy this one file. It mirrors src/callbacks/verify.ts; test/clients runs both over the same
 * captured callbacks.
 *
 * Rules kept here: read the raw body before parsing; reject a missing header, a non-numeric timestamp or
 * abs(now - timestamp) > 300 s; rebuild the six canonical components from what arrived (never decoded,
 * sorted or re-encoded); verify RSA-SHA256 (PKCS#1 v1.5) with the key from GET /api/pubkey; on a signature
 * failure refetch the key once (it may have been rotated); never bypass. Trust the fields only after `ok`.
 *
 * A valid signature says the gateway sent the callback, not that it pays into your order: anyone can create
 * a configuration with your callback URL (or a spelling of it that arrives byte-identical) and their own
 * payout, and its callbacks are signed as well. `verifyPayment` therefore also takes what you stored for
 * the order when you created it (address_in, coin) and refuses a callback that carries anything else.
 */
import crypto from 'node:crypto';

export const MAX_SKEW_SECONDS = 300;
export const TIMESTAMP_HEADER = 'X-Gateway-Timestamp';
export const SIGNATURE_HEADER = 'X-Gateway-Signature';

export type FailureReason = 'missing-header' | 'bad-timestamp' | 'stale-timestamp' | 'bad-signature' | 'key-unavailable';
export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: FailureReason };

/** What the merchant stored for the order from the create response, exactly as it was given. */
export interface ExpectedPayment {
  addressIn: string;
  coin: string;
}
export type PaymentFailure = 'bad-fields' | 'wrong-address-in' | 'wrong-coin';
export type CallbackFields = Record<string, unknown>;
export type PaymentResult =
  | { ok: true; timestamp: number; fields: CallbackFields }
  | { ok: false; reason: FailureReason | PaymentFailure };

/** What the HTTP stack hands over, before any parsing. */
export interface CallbackRequest {
  method: string;
  /** Request target exactly as received: Express `req.originalUrl`, Node `req.url`. */
  url: string;
  /** Header names in any case; Host supplies the host unless `host` is given. */
  headers: Record<string, string | string[] | undefined>;
  /** The raw body bytes; empty for GET. */
  rawBody: Buffer | Uint8Array | string | undefined;
  host?: string;
}

function header(headers: CallbackRequest['headers'], name: string): string | undefined {
  const want = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === want) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

/** Host header value → lowercase hostname without port; an IPv6 literal keeps its brackets. */
export function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

/** v1, timestamp, METHOD, host, path_and_query, raw body: joined by LF, no LF after the body. */
export function canonicalBytes(timestamp: string, method: string, host: string, target: string, body: Buffer | Uint8Array | string): Buffer {
  const head = Buffer.from(`v1\n${timestamp}\n${method.toUpperCase()}\n${host.toLowerCase()}\n${target}\n`, 'utf8');
  return Buffer.concat([head, typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body)]);
}

/** Checks one request against one key (PEM) at `now` (Unix milliseconds). */
export function verifyCallback(request: CallbackRequest, publicKeyPem: string, now: number = Date.now()): VerifyResult {
  const timestamp = header(request.headers, TIMESTAMP_HEADER);
  const signature = header(request.headers, SIGNATURE_HEADER);
  const hostHeader = request.host ?? header(request.headers, 'host');
  if (!timestamp || !signature || !hostHeader) return { ok: false, reason: 'missing-header' };
  if (!/^\d{1,15}$/.test(timestamp)) return { ok: false, reason: 'bad-timestamp' };
  const ts = Number(timestamp);
  if (Math.abs(Math.floor(now / 1000) - ts) > MAX_SKEW_SECONDS) return { ok: false, reason: 'stale-timestamp' };
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) return { ok: false, reason: 'bad-signature' };
  const bytes = canonicalBytes(timestamp, request.method, hostnameOf(hostHeader), request.url, request.rawBody ?? Buffer.alloc(0));
  let valid = false;
  try {
    valid = crypto.verify('sha256', bytes, { key: publicKeyPem, padding: crypto.constants.RSA_PKCS1_PADDING }, Buffer.from(signature, 'base64'));
  } catch {
    valid = false;
  }
  return valid ? { ok: true, timestamp: ts } : { ok: false, reason: 'bad-signature' };
}

/** The keys checked against the order: each must arrive exactly once, or the callback is refused. */
const ORDER_KEYS = ['address_in', 'coin'] as const;

function bodyText(body: CallbackRequest['rawBody']): string {
  if (body === undefined) return '';
  return typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
}

/**
 * The callback's fields: the query of a GET, else a JSON body (it opens with `{`), else a form body.
 * Undefined when they cannot be read or a checked key is missing or repeated. Call it on verified requests only.
 */
export function callbackFields(request: Pick<CallbackRequest, 'method' | 'url' | 'rawBody'>): CallbackFields | undefined {
  const body = bodyText(request.rawBody);
  if (request.method.toUpperCase() !== 'GET' && body.trimStart().startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(body);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
      const fields = parsed as CallbackFields;
      return ORDER_KEYS.every((k) => typeof fields[k] === 'string') ? fields : undefined;
    } catch {
      return undefined;
    }
  }
  const query = request.method.toUpperCase() === 'GET' ? (request.url.split('#')[0].split('?')[1] ?? '') : body;
  const params = new URLSearchParams(query);
  if (ORDER_KEYS.some((k) => params.getAll(k).length !== 1)) return undefined;
  return Object.fromEntries(params);
}

/** Refuses fields whose address_in or coin is not the order's: null when they match. */
export function checkPayment(fields: CallbackFields, expected: ExpectedPayment): PaymentFailure | null {
  if (fields.address_in !== expected.addressIn) return 'wrong-address-in';
  if (fields.coin !== expected.coin) return 'wrong-coin';
  return null;
}

function paymentOf(request: CallbackRequest, result: VerifyResult, expected: ExpectedPayment): PaymentResult {
  if (!result.ok) return result;
  const fields = callbackFields(request);
  if (!fields) return { ok: false, reason: 'bad-fields' };
  const wrong = checkPayment(fields, expected);
  return wrong ? { ok: false, reason: wrong } : { ok: true, timestamp: result.timestamp, fields };
}

/** The one-shot check with one key: signature and timestamp, then the order's address_in and coin. */
export function verifyPaymentCallback(request: CallbackRequest, publicKeyPem: string, expected: ExpectedPayment, now: number = Date.now()): PaymentResult {
  return paymentOf(request, verifyCallback(request, publicKeyPem, now), expected);
}

/** GET {gatewayUrl}/api/pubkey; anything but HTTP 200 with a PEM body is an error. */
export async function fetchPublicKey(gatewayUrl: string): Promise<string> {
  const res = await fetch(`${gatewayUrl.replace(/\/+$/, '')}/api/pubkey`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('BEGIN PUBLIC KEY')) throw new Error(`GET /api/pubkey answered ${res.status}`);
  return text;
}

/** Keeps the gateway's key and refetches it once when a signature fails (key rotation). */
export class CallbackVerifier {
  private key: string | undefined;
  private readonly fetchKey: (() => Promise<string>) | undefined;

  constructor(opts: { gatewayUrl?: string; publicKeyPem?: string; fetchKey?: () => Promise<string> }) {
    const gatewayUrl = opts.gatewayUrl;
    this.fetchKey = opts.fetchKey ?? (gatewayUrl ? () => fetchPublicKey(gatewayUrl) : undefined);
    this.key = opts.publicKeyPem;
    if (!this.key && !this.fetchKey) throw new Error('give gatewayUrl, fetchKey or publicKeyPem');
  }

  private async refetch(): Promise<string | undefined> {
    if (!this.fetchKey) return undefined;
    try {
      const pem = await this.fetchKey();
      crypto.createPublicKey(pem);
      this.key = pem;
      return pem;
    } catch {
      return undefined;
    }
  }

  async verify(request: CallbackRequest, now: number = Date.now()): Promise<VerifyResult> {
    let key = this.key;
    let fetched = false;
    if (!key) {
      key = await this.refetch();
      if (!key) return { ok: false, reason: 'key-unavailable' };
      fetched = true;
    }
    const result = verifyCallback(request, key, now);
    // Only a signature failure can mean a rotated key; one refetch, then the verdict stands.
    if (result.ok || result.reason !== 'bad-signature' || fetched) return result;
    const fresh = await this.refetch();
    return fresh ? verifyCallback(request, fresh, now) : result;
  }

  /**
   * The default path for a receiver: `verify`, then the fields, refused unless address_in and coin are what
   * the merchant stored for the order (found by the merchant's own reference in its callback URL).
   */
  async verifyPayment(request: CallbackRequest, expected: ExpectedPayment, now: number = Date.now()): Promise<PaymentResult> {
    return paymentOf(request, await this.verify(request, now), expected);
  }
}
