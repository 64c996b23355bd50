import { isReservedCallbackKey } from '../domain/callback-fields';
import { callbackHost } from '../domain/callback-host';
import type { PayloadFields, Transport } from './types';

/** Merchant query pairs kept in a callback (SPEC 8). */
export const MAX_MERCHANT_PAIRS = 100;

/** Exactly what goes on the wire: the signature covers `target` and `body` byte for byte. */
export interface WireRequest {
  method: 'GET' | 'POST';
  /** http: or https: */
  protocol: string;
  /** Lowercase hostname without port (IPv6 keeps its brackets, as in the URL). */
  host: string;
  /** Host header value: hostname plus a non-default port. */
  hostHeader: string;
  port: number;
  /** Request target starting with '/', as transmitted: path and query, never the fragment. */
  target: string;
  body: Buffer;
  contentType: string | undefined;
  /** The URL as sent, stored in delivery_attempts.request_url. */
  requestUrl: string;
}

function decodeKey(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * The merchant's own query pairs, raw and in order: empty pairs and keys that reuse a payload field name
 * are not "safe" and are dropped; at most MAX_MERCHANT_PAIRS are kept.
 */
export function merchantPairs(search: string): string[] {
  const raw = search.startsWith('?') ? search.slice(1) : search;
  if (raw === '') return [];
  return raw
    .split('&')
    .filter((pair) => pair !== '' && !isReservedCallbackKey(decodeKey(pair.split('=')[0])))
    .slice(0, MAX_MERCHANT_PAIRS);
}

/** application/x-www-form-urlencoded text of the fields (GET query and form body use the same encoding). */
export function encodeFields(fields: PayloadFields): string {
  const params = new URLSearchParams();
  for (const [k, v] of fields) params.append(k, String(v));
  return params.toString();
}

/** Where a callback URL's requests go and the part of their request target the merchant's URL decides. */
interface WireBase {
  url: URL;
  pairs: string[];
  port: number;
}

function wireBase(callbackUrl: string): WireBase {
  const url = new URL(callbackUrl);
  return { url, pairs: merchantPairs(url.search), port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80 };
}

const targetOf = (url: URL, pairs: string[]) => `${url.pathname || '/'}${pairs.length > 0 ? `?${pairs.join('&')}` : ''}`;

/**
 * The identity of a callback URL on the wire (DESIGN 15): the host, port and merchant request target its
 * callbacks are sent to, by the same code that builds them (buildWireRequest). Two URLs with one key (a
 * fragment, the host's case, the default port, a dot segment, an empty query pair apart) get callbacks the
 * merchant cannot tell apart, signature included; the scheme is left out because the signature does not
 * cover it and only the port decides where the request lands.
 */
export function callbackWireKey(callbackUrl: string): string {
  const { url, pairs, port } = wireBase(callbackUrl);
  return `${callbackHost(url)}:${port}${targetOf(url, pairs)}`;
}

/**
 * Builds the request for a callback URL and the transport-ready fields (fieldsForTransport). GET appends
 * the fields once after the merchant's pairs and sends no body; form and JSON POST carry the fields only
 * in the body.
 */
export function buildWireRequest(callbackUrl: string, transport: Transport, fields: PayloadFields): WireRequest {
  const { url, pairs, port } = wireBase(callbackUrl);
  let body = Buffer.alloc(0);
  let contentType: string | undefined;
  if (transport === 'get') {
    pairs.push(encodeFields(fields));
  } else if (transport === 'form') {
    body = Buffer.from(encodeFields(fields), 'utf8');
    contentType = 'application/x-www-form-urlencoded';
  } else {
    body = Buffer.from(JSON.stringify(Object.fromEntries(fields)), 'utf8');
    contentType = 'application/json';
  }
  const target = targetOf(url, pairs);
  return {
    method: transport === 'get' ? 'GET' : 'POST',
    protocol: url.protocol,
    host: callbackHost(url),
    hostHeader: url.host.toLowerCase(),
    port,
    target,
    body,
    contentType,
    requestUrl: `${url.protocol}//${url.host}${target}`,
  };
}
