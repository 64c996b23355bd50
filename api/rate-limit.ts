import net from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../src/domain/errors';
import { createsRateLimited } from '../src/observability/metrics';

/** Clients kept at most; past it the ones whose bucket is full again (idle a minute or more) go first. */
const CLIENTS_MAX = 100_000;

/**
 * The client a limit counts: its address (req.ip, which Express takes from X-Forwarded-For only behind a
 * trusted proxy, TRUST_PROXY), an IPv6 one by its /64, the block one subscriber is given whole.
 */
export function clientKey(ip: string | undefined): string {
  if (!ip) return '';
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (v4) return v4[1];
  if (net.isIPv6(ip)) {
    // Expanded, so that every spelling of one /64 gives one key.
    const [head, tail = ''] = ip.split('::');
    const left = head ? head.split(':') : [];
    const right = tail ? tail.split(':') : [];
    const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
    return `${groups.slice(0, 4).map((g) => Number.parseInt(g, 16).toString(16)).join(':')}::/64`;
  }
  return ip;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket per client: `perMinute` creates at once, refilled at `perMinute` a minute. Past it the
 * client gets 429 1003 with Retry-After, and other clients are not slowed: a flood from one address spends
 * its own bucket, not the deposit addresses honest merchants get. In memory, per API process.
 */
export class CreateRateLimit {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.perMs = perMinute / 60_000;
  }

  /** Takes one create of the client's bucket; the seconds to wait when there is none. */
  take(key: string): number | undefined {
    const now = this.now();
    let b = this.buckets.get(key);
    if (b) {
      b.tokens = Math.min(this.perMinute, b.tokens + (now - b.at) * this.perMs);
      b.at = now;
      // Most recently used last: the oldest entries are the first to drop.
      this.buckets.delete(key);
    } else {
      if (this.buckets.size >= CLIENTS_MAX) this.forgetIdle(now);
      b = { tokens: this.perMinute, at: now };
    }
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000));
  }

  /** Drops the clients whose bucket would be full by now (they lose nothing), oldest first; then the oldest. */
  private forgetIdle(now: number): void {
    for (const [key, b] of this.buckets) {
      if (this.buckets.size < CLIENTS_MAX * 0.9) return;
      if (b.tokens + (now - b.at) * this.perMs >= this.perMinute) this.buckets.delete(key);
    }
    for (const key of this.buckets.keys()) {
      if (this.buckets.size < CLIENTS_MAX * 0.9) return;
      this.buckets.delete(key);
    }
  }
}

/** The create routes' limit (SPEC 4.6 unchanged below it); `perMinute` 0 is none. */
export function createRateLimit(perMinute: number) {
  const limit = perMinute > 0 ? new CreateRateLimit(perMinute) : undefined;
  return <P>(req: Request<P>, res: Response, next: NextFunction): void => {
    const wait = limit?.take(clientKey(req.ip));
    if (wait === undefined) return next();
    createsRateLimited.inc();
    res.setHeader('Retry-After', String(wait));
    next(new GatewayError(1003, `Too many creates from this client: at most ${perMinute} a minute. Retry after ${wait} s.`));
  };
}
