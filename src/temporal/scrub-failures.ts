import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { scrubText } from '../observability/redact';

/** Room for a stack trace's frames in a history; a message keeps the log's bound. */
const MAX_STACK = 4000;

/**
 * What an activity's failure carries into the workflow's history (and the SDK's log line): its message and
 * stack trace scrubbed of URLs, query strings and signed-transaction-sized blobs, and no cause. Temporal
 * stores a thrown error whole, with its cause chain: an RPC client's error names the node's URL (with any
 * key in it) and repeats the request (a signed transaction). The type and the retry flag are kept, so a
 * workflow and a retry policy classify the failure as before.
 */
export function scrubbedFailure(e: unknown): unknown {
  if (e instanceof CancelledFailure || (e instanceof Error && e.name === 'AbortError')) return e;
  const error = e instanceof Error ? e : new Error(String(e));
  const own = error instanceof ApplicationFailure ? error : undefined;
  const failure = ApplicationFailure.create({
    message: scrubText(error.message),
    type: own ? (own.type ?? undefined) : (error.constructor?.name ?? error.name),
    nonRetryable: own?.nonRetryable ?? false,
    ...(own?.details ? { details: own.details as unknown[] } : {}),
    ...(own?.nextRetryDelay !== undefined ? { nextRetryDelay: own.nextRetryDelay } : {}),
    ...(own?.category ? { category: own.category } : {}),
  });
  failure.stack = scrubText(error.stack ?? '', MAX_STACK);
  return failure;
}

/** The worker's activity interceptor: every failure leaves the activity scrubbed (scrubbedFailure). */
export class ScrubbedActivityFailures implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await next(input);
    } catch (e) {
      throw scrubbedFailure(e);
    }
  }
}
