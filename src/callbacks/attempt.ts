import { canonicalBytes, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './canonical';
import { checkDestination, DnsFailureError, UnsafeDestinationError, type DestinationPolicy, type Resolver } from './destination';
import { buildPayload, fieldsForTransport } from './payload';
import { sendPinned } from './send';
import type { Signer } from './signer';
import { buildWireRequest, type WireRequest } from './transport';
import { transportOf, type CallbackEvent, type CallbackSnapshot, type CallbackTarget } from './types';

/**
 * delivered: HTTP 200. failed: anything else that may work later (non-200, timeout, refused, DNS, signing).
 * unsafe: the destination may not be called; delivery of the stage stops.
 */
export type AttemptOutcomeKind = 'delivered' | 'failed' | 'unsafe';

export interface AttemptOutcome {
  outcome: AttemptOutcomeKind;
  requestUrl: string;
  status: number | null;
  body: string | null;
  error: string | null;
}

/** The request for one snapshot and event: pure, so every attempt of a snapshot carries the same bytes. */
export function buildCallbackRequest(target: CallbackTarget, snapshot: CallbackSnapshot, event: CallbackEvent): WireRequest {
  const transport = transportOf(target);
  const fields = fieldsForTransport(buildPayload(snapshot, event, { convert: target.convert }), transport);
  return buildWireRequest(target.url, transport, fields);
}

export interface AttemptOptions {
  target: CallbackTarget;
  snapshot: CallbackSnapshot;
  event: CallbackEvent;
  signer: Signer;
  policy: DestinationPolicy;
  timeoutMs: number;
  /** Unix milliseconds for the timestamp header; defaults to the clock. */
  now?: number;
  resolve?: Resolver;
}

/** How the error of an unsafe outcome begins: a URL that does not parse, or a destination refused. */
const INVALID_URL = 'invalid callback URL';
const UNSAFE_DESTINATION = 'unsafe destination';

/** An attempt stored with this error was unsafe (activities/delivery.ts reads a stored attempt back by it). */
export function isUnsafeError(error: string | null | undefined): boolean {
  return !!error && (error.startsWith(INVALID_URL) || error.startsWith(UNSAFE_DESTINATION));
}

/** One delivery attempt: check the destination, sign the exact bytes, send once, judge by SPEC 4.9. */
export async function performAttempt(o: AttemptOptions): Promise<AttemptOutcome> {
  let req: WireRequest;
  try {
    req = buildCallbackRequest(o.target, o.snapshot, o.event);
  } catch (e) {
    return { outcome: 'unsafe', requestUrl: o.target.url, status: null, body: null, error: `${INVALID_URL}: ${(e as Error).message}` };
  }
  const base = { requestUrl: req.requestUrl, status: null, body: null };
  let dest;
  try {
    dest = await checkDestination(o.target.url, o.policy, o.resolve);
  } catch (e) {
    if (e instanceof UnsafeDestinationError) return { ...base, outcome: 'unsafe', error: `${UNSAFE_DESTINATION}: ${e.message}` };
    if (e instanceof DnsFailureError) return { ...base, outcome: 'failed', error: e.message };
    throw e;
  }
  const timestamp = String(Math.floor((o.now ?? Date.now()) / 1000));
  let signature: string;
  try {
    signature = await o.signer.sign(canonicalBytes({ timestamp, method: req.method, host: req.host, target: req.target, body: req.body }));
  } catch (e) {
    // No unsigned fallback (SPEC 5): nothing is sent, the attempt counts as failed.
    return { ...base, outcome: 'failed', error: `signing failed, request not sent: ${(e as Error).message}` };
  }
  try {
    const res = await sendPinned(req, dest, { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signature }, o.timeoutMs);
    return {
      ...base,
      outcome: res.status === 200 ? 'delivered' : 'failed',
      status: res.status,
      body: res.body,
      error: res.status === 200 ? null : `HTTP ${res.status}`,
    };
  } catch (e) {
    const code = (e as { code?: string }).code;
    return { ...base, outcome: 'failed', error: `${code ? `${code}: ` : ''}${(e as Error).message}` };
  }
}
