/**
 * What of an error may reach a log line, an error message or a Temporal history. A callback URL is a
 * merchant's identity and may carry order references or tokens in its query, and RPC URLs may carry
 * credentials: no URL and no query string is ever printed, at any level, and no signed transaction. Database errors from drizzle repeat the query's parameters in their
 * message ("Failed query: … params: …"), so only the driver's own error (its SQLSTATE and text) is kept.
 */
export interface LoggedError {
  name: string;
  code?: string;
  message: string;
}

const URL_LIKE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]*/gi;
const QUERY_LIKE = /\?[^\s"'<>]*/g;
/**
 * Signed transactions as RPC errors repeat them (ethers prints the request's payload): hex longer than a
 * hash or a signature (a 32-byte txid is 64 digits), base64 longer than a Solana signature in base58.
 */
const LONG_HEX = /\b(0x)?[0-9a-f]{140,}\b/gi;
const LONG_BASE64 = /[A-Za-z0-9+/]{120,}={0,2}/g;
const MAX = 500;

/** A message with every URL, query string and signed-transaction-sized blob replaced, cut to `max` characters. */
export function scrubText(text: string, max = MAX): string {
  return text.replace(URL_LIKE, '[url]').replace(QUERY_LIKE, '?[query]').replace(LONG_HEX, '[hex]').replace(LONG_BASE64, '[data]').slice(0, max);
}

function driverError(err: Error): Error {
  // DrizzleQueryError: { query, params, cause }. The cause is the pg error without the parameters.
  const cause = (err as { cause?: unknown }).cause;
  if ('params' in err && 'query' in err && cause instanceof Error) return cause;
  return err;
}

export function describeError(err: unknown): LoggedError {
  if (!(err instanceof Error)) return { name: typeof err, message: scrubText(String(err)) };
  const e = driverError(err);
  const code = (e as { code?: unknown }).code;
  const out: LoggedError = { name: e.name, message: scrubText(e.message) };
  if (typeof code === 'string' || typeof code === 'number') out.code = String(code);
  return out;
}
