import { scrubText } from '../observability/redact';

/**
 * The text of an RPC client's error that may travel on, in an adapter's own error (which reaches logs,
 * activity results such as a refused broadcast, and Temporal histories). ethers' message appends the
 * request (its URL, with any key in the query) and its payload (the signed transaction): only its short
 * message and the node's JSON-RPC error are kept. Whatever is left is scrubbed of URLs, query strings and
 * transaction-sized blobs, and of the endpoint's credentials when the caller gives them. Errors are
 * classified by their type or code, never by this text.
 */
export function rpcErrorMessage(e: unknown, credentials: readonly string[] = []): string {
  const x = (typeof e === 'object' && e !== null ? e : {}) as { shortMessage?: unknown; message?: unknown; error?: { message?: unknown } };
  const text = typeof x.shortMessage === 'string'
    ? `${x.shortMessage}${typeof x.error?.message === 'string' ? `: ${x.error.message}` : ''}`
    : String(x.message ?? e);
  // A node's answer may repeat the endpoint's key in its own words (credentialsOf in rpc-url.ts).
  return scrubText(credentials.reduce((t, c) => t.split(c).join('[credential]'), text));
}
