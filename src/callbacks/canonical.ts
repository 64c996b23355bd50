/**
 * The signed bytes of SPEC 5: six components joined by LF, no LF after the body.
 * `target` and `body` are the exact bytes transmitted, never decoded, sorted or rebuilt.
 */
export const CANONICAL_VERSION = 'v1';
export const TIMESTAMP_HEADER = 'X-Gateway-Timestamp';
export const SIGNATURE_HEADER = 'X-Gateway-Signature';

export interface CanonicalParts {
  timestamp: string;
  method: string;
  host: string;
  target: string;
  body: Buffer | Uint8Array | string;
}

export function canonicalBytes(p: CanonicalParts): Buffer {
  const head = `${CANONICAL_VERSION}\n${p.timestamp}\n${p.method.toUpperCase()}\n${p.host.toLowerCase()}\n${p.target}\n`;
  const body = typeof p.body === 'string' ? Buffer.from(p.body, 'utf8') : Buffer.from(p.body);
  return Buffer.concat([Buffer.from(head, 'utf8'), body]);
}

/** Host header value → hostname only: no port; IPv6 keeps its brackets. */
export function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}
