import dns from 'node:dns';
import net from 'node:net';
import { classifyAddress, isAllowedAddress, type AddressClass } from './ip-ranges';

/** The destination may never be called: delivery of the stage stops and the attempt is recorded. */
export class UnsafeDestinationError extends Error {
  constructor(message: string, readonly addressClass?: AddressClass) {
    super(message);
    this.name = 'UnsafeDestinationError';
  }
}

/** The name did not resolve: an ordinary failed attempt, retried on schedule. */
export class DnsFailureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DnsFailureError';
  }
}

export interface CheckedDestination {
  /** The address that was checked; the request connects to exactly this one (no second lookup). */
  address: string;
  family: 4 | 6;
}

export interface DestinationPolicy {
  allowPrivate: boolean;
  allowHttp: boolean;
}

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * Resolves the callback host now (at every attempt) and checks every address it resolves to: a name
 * with any non-public address is refused, so a DNS answer mixing public and internal addresses cannot
 * steer the connection inward.
 */
export async function checkDestination(
  callbackUrl: string,
  policy: DestinationPolicy,
  resolve: Resolver = systemResolver,
): Promise<CheckedDestination> {
  let url: URL;
  try {
    url = new URL(callbackUrl);
  } catch {
    throw new UnsafeDestinationError('callback URL is not a valid URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new UnsafeDestinationError(`scheme ${url.protocol} is not allowed`);
  }
  if (url.username || url.password) throw new UnsafeDestinationError('credentials in the callback URL are not allowed');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let answers: Array<{ address: string; family: number }>;
  if (net.isIP(host)) {
    answers = [{ address: host, family: net.isIP(host) }];
  } else {
    try {
      answers = await resolve(host);
    } catch (e) {
      throw new DnsFailureError(`DNS lookup of ${host} failed: ${(e as { code?: string }).code ?? String(e)}`);
    }
    if (answers.length === 0) throw new DnsFailureError(`DNS lookup of ${host} returned no address`);
  }
  for (const a of answers) {
    const cls = classifyAddress(a.address);
    if (!isAllowedAddress(cls, policy.allowPrivate)) {
      throw new UnsafeDestinationError(`destination ${host} resolves to ${a.address} (${cls}), which is not a public address`, cls);
    }
  }
  return { address: answers[0].address, family: answers[0].family === 6 ? 6 : 4 };
}
