// The forward effect of the payment workflow: sign once and broadcast (send, below), then one reading per
// wake (forwardFate) decides; the watcher's `forward` signal wakes it when a block holds the forward.
// It records processing (the activity's first statement) and forwards; the snapshot is the effect after it.
import { ActivityFailure, ApplicationFailure, isCancellation, patched } from '@temporalio/workflow';
import type { ForwardFate } from '../activities/deposit';
import type { LifecycleEvent } from '../src/domain/lifecycle';
import { forwarding, local, quickForwarding, readForwardFate } from './payment-activities';

/** The forward's progress, carried across runs: which plan this is, and a first reading of final evidence. */
export interface ForwardProgress {
  round: number;
  /** Head height of a first reading that the stored bytes can never land; a second, higher one replaces them. */
  evidence: string | null;
  /** Why the forward waits to be tried again (a transient condition), while it does. */
  waiting: ForwardWaiting | null;
}

/** A forward stopped by a transient condition: the reason, how often in a row, since when and until when (ISO times). */
export interface ForwardWaiting {
  reason: string;
  /** The failure's type (the activity error's name), for the operator; never used to decide. */
  type: string;
  retries: number;
  since: string;
  nextTry: string;
}

export interface ForwardWaits {
  /** Waits for a chain signal or `ms` (continuing as new first when over budget); true when signalled. */
  waitHint(ms: number): Promise<boolean>;
  /** Marks the start of a reading (hints after it wake the next wait). */
  beginReading(): void;
  fallbackMs: number;
  recheckMs: number;
  /** The longest wait between tries of a forward stopped by a transient condition. */
  retryCapMs: number;
}

/** ApplicationFailure type of activities/forward-send.ts for a txid that belongs to another payment (a bug guard): final. */
const FORWARD_COLLISION = 'ForwardCollision';

/**
 * The patch (the first after v1.0.0) that makes the forward's first try a local activity (quickForwarding):
 * histories recorded without it take the forward as an activity only.
 */
export const FORWARD_LOCAL_FIRST = 'forward-local-first';

/**
 * The patch (the second after v1.0.0) that has the forward's step record `processing` itself at finality:
 * histories recorded without it have a step of their own for it (activities/deposit.ts recordProcessing) first.
 */
export const PROCESSING_IN_FORWARD = 'processing-in-forward';

/** The forward's first retry after a transient failure; the wait doubles from it up to the workflow's cap. */
export const FORWARD_RETRY_FIRST_MS = 60_000;

/** The activity's own failure (a local activity's arrives bare or inside an ActivityFailure). */
function applicationFailure(e: unknown): ApplicationFailure | undefined {
  if (e instanceof ApplicationFailure) return e;
  if (e instanceof ActivityFailure && e.cause instanceof ApplicationFailure) return e.cause;
  return undefined;
}

/**
 * The wait after the `retries`-th transient failure in a row: FORWARD_RETRY_FIRST_MS doubling, at most `capMs`.
 */
export function forwardRetryDelay(retries: number, capMs: number): number {
  return Math.min(FORWARD_RETRY_FIRST_MS * 2 ** Math.min(Math.max(retries - 1, 0), 30), capMs);
}

/**
 * Forward until included. A forward failed on chain is recorded (funds stay at address_in). Bytes are
 * replaced only when two readings at increasing heights both prove they can never land (docs/architecture.md,
 * "Money integrity"); until then the reading re-sends bytes the node lacks. A forward the activity could not make
 * (anything but a txid collision) is no verdict: forward_waiting, with the reason and the next try in
 * `c.forward.waiting`; the workflow waits, then calls this again.
 */
export async function forwardStage(
  c: { payment: { uuid: string }; txidOut: string | null; forward: ForwardProgress },
  w: ForwardWaits,
): Promise<LifecycleEvent> {
  const uuid = c.payment.uuid;
  for (;;) {
    let txidOut: string;
    /** The activity's own first reading, used instead of a reading of the workflow's. */
    let first: ForwardFate | undefined;
    try {
      // Idempotent: a stored forward is returned (and re-sent), never signed twice.
      w.beginReading();
      const sent = await send(uuid);
      txidOut = sent.txidOut;
      first = sent.fate;
    } catch (e) {
      if (isCancellation(e)) throw e;
      const failure = applicationFailure(e);
      const message = failure?.message ?? (e instanceof Error ? e.message : String(e));
      // A txid that belongs to another payment is a bug guard, final; nothing else before a broadcast is.
      if (failure?.type === FORWARD_COLLISION) return { type: 'forward_failed', reason: `forward failed: ${message}` };
      const type = failure?.type ?? (e instanceof Error ? e.name : 'Error');
      const retries = (c.forward.waiting?.retries ?? 0) + 1;
      const now = new Date().getTime(); // workflow clock: deterministic on replay
      c.forward.waiting = {
        reason: message,
        type,
        retries,
        since: c.forward.waiting?.since ?? new Date(now).toISOString(),
        nextTry: new Date(now + forwardRetryDelay(retries, w.retryCapMs)).toISOString(),
      };
      return { type: 'forward_waiting', reason: `forward waiting (${type}): ${message}` };
    }
    c.forward.waiting = null;
    c.txidOut = txidOut;
    let short = w.recheckMs;
    let soon = false;
    for (;;) {
      const fate = first ?? (await read(uuid, w));
      first = undefined;
      if (fate === undefined) {
        // The node did not answer: no reading; wait for the next signal or the fallback.
        await w.waitHint(w.fallbackMs);
        continue;
      }
      if (fate.status === 'confirmed') return { type: 'forwarded' };
      if (fate.status === 'failed') return { type: 'forward_failed', reason: `forward ${txidOut} failed: ${fate.reason}` };
      if (fate.status === 'replaceable') {
        const { round, evidence } = c.forward;
        // No limit of plans: bytes that can never land are re-signed for as long as the deposit is unspent
        // (a Solana forward after every expired blockhash); the evidence rule keeps it to one payout.
        if (evidence !== null && BigInt(fate.observedAt) > BigInt(evidence)) {
          await local.discardForward(uuid, txidOut);
          c.forward = { round: round + 1, evidence: null, waiting: null };
          break;
        }
        c.forward.evidence ??= fate.observedAt;
      } else {
        // The evidence must hold on consecutive readings.
        c.forward.evidence = null;
      }
      const signalled = await w.waitHint(soon || c.forward.evidence !== null ? short : w.fallbackMs);
      soon = signalled;
      short = signalled ? w.recheckMs : Math.min(short * 2, w.fallbackMs);
    }
  }
}

/**
 * Signs once and broadcasts: first as a local activity of a few seconds, in the workflow task of the steps
 * before it; a try that times out (a lock held by another forward, a top-up to be mined) or fails retryably
 * is made again by the activity that heartbeats, which re-sends the bytes the first try stored. A failure
 * the activity would only repeat (non-retryable) is the forward's answer.
 */
async function send(uuid: string): ReturnType<typeof forwarding.forward> {
  if (patched(FORWARD_LOCAL_FIRST)) {
    try {
      return await quickForwarding.forward(uuid);
    } catch (e) {
      if (isCancellation(e) || applicationFailure(e)?.nonRetryable) throw e;
    }
  }
  return forwarding.forward(uuid);
}

/** One reading of the forward's fate (undefined: the node did not answer). */
async function read(uuid: string, w: ForwardWaits): Promise<ForwardFate | undefined> {
  w.beginReading();
  return readForwardFate(uuid);
}
