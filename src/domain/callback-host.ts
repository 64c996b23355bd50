/**
 * The host of a callback URL: its lower-cased hostname, no port, an IPv6 address in brackets (SPEC 5's
 * signed host). The same host keys the fee tier (SPEC 4.8: the callback domain's rolling volume), the
 * workflow's search attribute and the stored payment_configs.callback_host the volume is summed by, so it
 * is parsed here only, by the WHATWG URL parser every other reading of the URL uses.
 */
export function callbackHost(url: string | URL): string {
  return (typeof url === 'string' ? new URL(url) : url).hostname.toLowerCase();
}
