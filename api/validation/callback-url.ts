import { isReservedCallbackKey } from '../../src/domain/callback-fields';

export const CALLBACK_URL_MAX = 2048;
export const MERCHANT_QUERY_PAIRS_MAX = 100;

/**
 * Problems with a callback URL as received (SPEC 4.6, 4.9, 8); empty when it is acceptable. The URL is
 * the configuration's identity and is stored byte for byte, so nothing here rewrites it: a string that
 * would need rewriting (whitespace, non-ASCII, backslashes) is refused instead.
 */
export function callbackUrlProblems(raw: string, opts: { allowHttp: boolean }): string[] {
  if (raw.length === 0) return ['Required.'];
  if (raw.length > CALLBACK_URL_MAX) return [`Must be at most ${CALLBACK_URL_MAX} characters.`];
  // Printable ASCII only: anything else a URL parser would percent-encode or drop, changing the identity.
  if (!/^[\x21-\x7e]+$/.test(raw) || raw.includes('\\')) {
    return ['Must be a URL of printable ASCII characters without spaces or backslashes (percent-encode the rest).'];
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return ['Must be an absolute http(s) URL.'];
  }
  const problems: string[] = [];
  const scheme = raw.slice(0, raw.indexOf(':')).toLowerCase();
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return ['Must be an absolute http(s) URL.'];
  if (!/^https?:\/\/[^/?#]/i.test(raw) || url.hostname === '') problems.push('Must be an absolute http(s) URL with a host.');
  if (scheme === 'http' && !opts.allowHttp) problems.push('Must use https.');
  // Any userinfo, even an empty one (`https://:@host/`, `https://@host/`), which the URL parser reports as no credentials.
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(raw)?.[1] ?? '';
  if (url.username !== '' || url.password !== '' || authority.includes('@')) problems.push('Must not contain credentials.');
  // Port 0 cannot be connected to; the parser keeps it (`https://host:0/`, `:00`).
  if (url.port !== '' && Number(url.port) === 0) problems.push('Must not use port 0.');

  const query = url.search.slice(1);
  if (query !== '') {
    const pairs = query.split('&').filter((p) => p !== '');
    if (pairs.length > MERCHANT_QUERY_PAIRS_MAX) problems.push(`Must have at most ${MERCHANT_QUERY_PAIRS_MAX} query pairs.`);
    const reserved = new Set<string>();
    let emptyKey = false;
    let badEncoding = false;
    for (const pair of pairs.slice(0, MERCHANT_QUERY_PAIRS_MAX + 1)) {
      const rawKey = pair.split('=')[0];
      let key: string;
      try {
        key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
      } catch {
        badEncoding = true;
        continue;
      }
      if (key === '') emptyKey = true;
      else if (isReservedCallbackKey(key)) reserved.add(key);
    }
    if (badEncoding) problems.push('Query contains invalid percent-encoding.');
    if (emptyKey) problems.push('Query pairs must have a name.');
    if (reserved.size > 0) {
      problems.push(`Query names must not reuse callback payload fields: ${[...reserved].slice(0, 5).join(', ')}.`);
    }
  }
  return problems;
}
