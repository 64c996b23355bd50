/**
 * Verifies the gateway's signed merchant callbacks (SPEC 5). Standalone: Node >= 18 built-ins only, so a
 * merchant can copy this one file. It mirrors src/callbacks/verify.ts; test/clients runs both over the same
 * captured callbacks.
 *
 * Rules kept here: read the raw body before parsing; reject a missing header, a non-numeric timestamp or
 * abs(now - timestamp) > 300 s; rebuild the six canonical components from what arrived (never decoded,
 * sorted or re-encoded); verify RSA-SHA256 (PKCS#1 v1.5) with the key from GET /api/pubkey; on a signature
 * failure refetch the key once (it may have been rotated); never bypass. Trust the fields only after `ok`.
 */
import crypto from 'node:crypto';

export const MAX_SKEW_SECONDS = 300;
export const TIMESTAMP_HEADER = 'X-Gateway-Timestamp';
export const SIGNATURE_HEADER = 'X-Gateway-Signature';

export type FailureReason = 'missing-header' | 'bad-timestamp' | 'stale-timestamp' | 'bad-signature' | 'key-unavailable';
export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: FailureReason };

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
}
