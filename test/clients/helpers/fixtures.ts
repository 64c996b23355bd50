import fs from 'node:fs';
import path from 'node:path';
import type { Captured } from './capture';
import type { Served } from './key-server';

/** One verification to run in every language, and the verdict it must reach. */
export interface FixtureCase {
  name: string;
  method: string;
  target: string;
  /** host, x-gateway-timestamp, x-gateway-signature (lowercase names, as Node hands them over). */
  headers: Record<string, string>;
  body_b64: string;
  /** Unix seconds the verifier takes as "now". */
  now: number;
  /** PEM file of the key the verifier starts with; null: it must fetch one. */
  key_file: string | null;
  /** Gateway base URL to (re)fetch the key from; null: a single check with key_file. */
  gateway: string | null;
  /** What the merchant stored for the order (the create response's address_in and coin). */
  expected: { address_in: string; coin: string };
  expect: { ok: boolean; reason: string | null };
  /** With a gateway: how many GET /api/pubkey the verifier must make. */
  fetches?: { served: Served; id: string; count: number };
}

const SIGNED = ['host', 'x-gateway-timestamp', 'x-gateway-signature'];

function lastByteFlipped(b: Buffer): Buffer {
  const out = Buffer.from(b);
  out[out.length - 1] ^= 1;
  return out;
}

/** Every captured callback as it arrived (must verify), and tampered with in each way SPEC 5 forbids (must not). */
export function signatureCases(captured: Captured[], keys: { right: string; wrong: string }): FixtureCase[] {
  const cases: FixtureCase[] = [];
  for (const { transport, event, snapshot, request: r } of captured) {
    const headers = Object.fromEntries(SIGNED.map((h) => [h, String(r.headers[h])]));
    const ts = Number(headers['x-gateway-timestamp']);
    const base: FixtureCase = {
      name: '', method: r.method, target: r.url, headers, body_b64: r.rawBody.toString('base64'), now: ts, key_file: keys.right, gateway: null,
      expected: { address_in: snapshot.address_in, coin: snapshot.coin }, expect: { ok: true, reason: null },
    };
    const add = (what: string, over: Partial<FixtureCase>, reason: string | null) =>
      cases.push({ ...base, ...over, name: `${transport}/${event}: ${what}`, expect: { ok: reason === null, reason } });
    const [p, q] = r.url.split('?');
    add('as delivered', {}, null);
    add('300 s later', { now: ts + 300 }, null);
    add('300 s earlier', { now: ts - 300 }, null);
    add('Host without port', { headers: { ...headers, host: '127.0.0.1' } }, null);
    if (r.rawBody.length > 0) add('one body bit flipped', { body_b64: lastByteFlipped(r.rawBody).toString('base64') }, 'bad-signature');
    else add('one query bit flipped', { target: lastByteFlipped(Buffer.from(r.url)).toString('latin1') }, 'bad-signature');
    add('query reordered', { target: `${p}?${q.split('&').reverse().join('&')}` }, 'bad-signature');
    add('query decoded', { target: decodeURIComponent(r.url) }, 'bad-signature');
    add('another host', { headers: { ...headers, host: 'attacker.example' } }, 'bad-signature');
    add('another method', { method: r.method === 'GET' ? 'POST' : 'GET' }, 'bad-signature');
    add('301 s later (stale)', { now: ts + 301 }, 'stale-timestamp');
    add('301 s earlier (from the future)', { now: ts - 301 }, 'stale-timestamp');
    add('timestamp header changed', { headers: { ...headers, 'x-gateway-timestamp': String(ts - 1) } }, 'bad-signature');
    add('non-numeric timestamp', { headers: { ...headers, 'x-gateway-timestamp': `${ts}.0` } }, 'bad-timestamp');
    add('exponent timestamp', { headers: { ...headers, 'x-gateway-timestamp': '17e8' } }, 'bad-timestamp');
    add('no signature header', { headers: { host: headers.host, 'x-gateway-timestamp': headers['x-gateway-timestamp'] } }, 'missing-header');
    add('no timestamp header', { headers: { host: headers.host, 'x-gateway-signature': headers['x-gateway-signature'] } }, 'missing-header');
    add('signature not base64', { headers: { ...headers, 'x-gateway-signature': `!${headers['x-gateway-signature']}` } }, 'bad-signature');
    add('wrong key', { key_file: keys.wrong }, 'bad-signature');
    // A genuine signature for the merchant's own callback URL, from a configuration whose address_in is not the
    // one the merchant stored for the order: a squat or an alias of its URL. Its payment goes to another payout.
    add('address_in of another configuration (squat, alias)', { expected: { address_in: `${snapshot.address_in}x`, coin: snapshot.coin } }, 'wrong-address-in');
    add('address_in in another case', { expected: { address_in: snapshot.address_in.toUpperCase(), coin: snapshot.coin } }, 'wrong-address-in');
    add('another coin than the order\'s', { expected: { address_in: snapshot.address_in, coin: snapshot.coin === 'eth' ? 'btc' : 'eth' } }, 'wrong-coin');
    add('forged address_in and a stale timestamp: the timestamp first', { now: ts + 301, expected: { address_in: 'other', coin: snapshot.coin } }, 'stale-timestamp');
  }
  return cases;
}

/**
 * The key-refetch rule with a real GET /api/pubkey: one refetch after a signature failure, none after any
 * other failure, never a bypass. Ids carry the language so every verifier's fetches are counted apart.
 */
export function refetchCases(one: FixtureCase, lang: string, keys: { right: string; wrong: string }, gatewayUrl: (s: Served, id: string) => string): FixtureCase[] {
  const c = (name: string, keyFile: string | null, served: Served, expect: string | null, count: number, over: Partial<FixtureCase> = {}): FixtureCase => {
    const id = `${lang}-${name.replace(/[^a-z]+/g, '-')}`;
    return {
      ...one, ...over, name: `refetch: ${name}`, key_file: keyFile, gateway: gatewayUrl(served, id), expect: { ok: expect === null, reason: expect },
      fetches: { served, id, count },
    };
  };
  return [
    c('cached key rotated, fresh key verifies', keys.wrong, 'right', null, 1),
    c('cached key still right, no fetch', keys.right, 'right', null, 0),
    c('no cached key, fetched on first use', null, 'right', null, 1),
    c('gateway serves another key, refused after one fetch', keys.wrong, 'wrong', 'bad-signature', 1),
    c('gateway has no key, refused after one fetch', keys.wrong, 'none', 'bad-signature', 1),
    c('no cached key and none served', null, 'none', 'key-unavailable', 1),
    c('stale timestamp is no reason to refetch', keys.wrong, 'right', 'stale-timestamp', 0, { now: one.now + 301 }),
  ];
}

/** Writes the cases where a child process reads them; returns the file. */
export function writeCases(dir: string, lang: string, cases: FixtureCase[]): string {
  const file = path.join(dir, `cases-${lang}.json`);
  fs.writeFileSync(file, JSON.stringify(cases, null, 1));
  return file;
}
