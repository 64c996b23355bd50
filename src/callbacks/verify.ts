import crypto from 'node:crypto';
import { canonicalBytes, hostnameOf, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './canonical';

/** Receiver rule of SPEC 5: abs(now - timestamp) <= 300 seconds. */
export const MAX_SKEW_SECONDS = 300;

/** What a merchant's HTTP stack hands over, before any parsing. */
export interface CallbackRequest {
  method: string;
  /** Request target exactly as received, e.g. Express `req.originalUrl` or Node `req.url`. */
  url: string;
  /** Header names in any case; the Host header supplies the host unless `host` is given. */
  headers: Record<string, string | string[] | undefined>;
  /** The raw body bytes, read before parsing; empty for GET. */
  rawBody: Buffer | Uint8Array | string | undefined;
  host?: string;
}

export type VerifyResult =
  | { ok: true; timestamp: number }
  | { ok: false; reason: 'missing-header' | 'bad-timestamp' | 'stale-timestamp' | 'bad-signature' };

function header(headers: CallbackRequest['headers'], name: string): string | undefined {
  const want = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === want) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

/**
 * Verifies a gateway callback (SPEC 5 receiver rules): headers present, timestamp numeric and fresh, then
 * RSA-SHA256 over the rebuilt canonical bytes. Trust the fields only when `ok` is true.
 */
export function verifyCallback(request: CallbackRequest, publicKeyPem: string, now: number = Date.now()): VerifyResult {
  const timestamp = header(request.headers, TIMESTAMP_HEADER);
  const signature = header(request.headers, SIGNATURE_HEADER);
  const hostHeader = request.host ?? header(request.headers, 'host');
  if (!timestamp || !signature || !hostHeader) return { ok: false, reason: 'missing-header' };
  if (!/^\d{1,15}$/.test(timestamp)) return { ok: false, reason: 'bad-timestamp' };
  const ts = Number(timestamp);
  if (Math.abs(Math.floor(now / 1000) - ts) > MAX_SKEW_SECONDS) return { ok: false, reason: 'stale-timestamp' };
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) return { ok: false, reason: 'bad-signature' };
  const bytes = canonicalBytes({
    timestamp,
    method: request.method,
    host: hostnameOf(hostHeader),
    target: request.url,
    body: request.rawBody ?? Buffer.alloc(0),
  });
  let valid = false;
  try {
    valid = crypto.verify('sha256', bytes, { key: publicKeyPem, padding: crypto.constants.RSA_PKCS1_PADDING }, Buffer.from(signature, 'base64'));
  } catch {
    valid = false;
  }
  return valid ? { ok: true, timestamp: ts } : { ok: false, reason: 'bad-signature' };
}
