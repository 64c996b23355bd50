import { ApplicationFailure } from '@temporalio/common';
import { and, eq, sql } from 'drizzle-orm';
import { isUnsafeError, performAttempt, type AttemptOutcomeKind } from '../src/callbacks/attempt';
import type { Signer } from '../src/callbacks/signer';
import type { CallbackEvent, CallbackSnapshot } from '../src/callbacks/types';
import type { Config } from '../src/config';
import type { Db } from '../src/db/client';
import { $, oncePerDb, preparedStatement, slot } from '../src/db/prepared';
import { deliveryAttempts, paymentConfigs, payments } from '../src/db/schema';
import { deliveryAttempts as deliveryAttemptsMetric } from '../src/observability/metrics';
import { withHeartbeat } from './forward-support';

export interface DeliveryDeps {
  db: Db;
  signer: Signer;
  config: Pick<Config, 'callbackAllowPrivate' | 'callbackAllowHttp' | 'callbackTimeoutMs'>;
}

export interface DeliverAttemptInput {
  paymentUuid: string;
  stage: CallbackEvent;
  /** 1..6 automatic attempts; 7 and later are operator resends. */
  attempt: number;
  snapshot: CallbackSnapshot;
  /** Delay before the next attempt if this one fails; null after the last automatic attempt (next_try null). */
  nextTryDelayMs: number | null;
}

export interface DeliverAttemptResult {
  /** 'invalid' is set by the workflow when the activity failed permanently (e.g. unknown payment). */
  outcome: AttemptOutcomeKind | 'skipped' | 'invalid';
  status: number | null;
  error: string | null;
  /** ISO time of the next attempt recorded with a failed attempt. */
  nextTry: string | null;
}

/** Payments whose lifecycle is past the pending stage: a pending attempt is never sent for them (SPEC 3 rule 1). */
const PAST_PENDING = new Set(['sent', 'done']);

/** An attempt's statements, prepared once per database handle (src/db/prepared.ts): every callback runs them. */
const statementsOf = oncePerDb((db: Db) => ({
  /** The payment's callback target and state, with this attempt's stored row if it was made (one round trip). */
  target: db
    .select({
      result: payments.result,
      url: paymentConfigs.callbackUrl,
      post: paymentConfigs.post,
      json: paymentConfigs.json,
      convert: paymentConfigs.convert,
      stored: deliveryAttempts,
    })
    .from(payments)
    .innerJoin(paymentConfigs, eq(paymentConfigs.id, payments.configId))
    .leftJoin(
      deliveryAttempts,
      and(
        eq(deliveryAttempts.paymentUuid, payments.uuid),
        eq(deliveryAttempts.stage, sql.placeholder('stage')),
        eq(deliveryAttempts.attempt, sql.placeholder('attempt')),
      ),
    )
    .where(eq(payments.uuid, sql.placeholder('uuid')))
    .limit(1)
    .prepare('gateway_attempt_target_stored'),
  done: db
    .update(payments)
    .set({ result: 'done', lastUpdate: slot('now') })
    .where(eq(payments.uuid, sql.placeholder('uuid')))
    .prepare('gateway_mark_done'),
}));

/**
 * An attempt's row stored (kept if one is stored already: a run that died after storing it) and, for a
 * delivered confirmed attempt (`done`), its payment marked done in the same statement: one round trip where
 * a delivered one took two. The insert needs no RETURNING: PostgreSQL runs a data-modifying WITH part to
 * completion whether or not the main statement reads it.
 */
const storeAttempt = preparedStatement(
  'gateway_store_attempt',
  sql`WITH ins AS (
    INSERT INTO delivery_attempts (payment_uuid, stage, attempt, request_url, response_body, response_status, error, next_try, pending, confirmed)
    VALUES (${$('uuid')}::uuid, ${$('stage')}::text, ${$('attempt')}::integer, ${$('url')}::text, ${$('body')}::text, ${$('status')}::integer,
      ${$('error')}::text, ${$('nextTry')}::timestamptz, ${$('pending')}::smallint, ${$('confirmed')}::smallint)
    ON CONFLICT DO NOTHING
  )
  UPDATE payments SET result = 'done', last_update = ${$('now')}::timestamptz WHERE uuid = ${$('uuid')}::uuid AND ${$('done')}::boolean`,
);

export function createDeliveryActivities(deps: DeliveryDeps) {
  return {
    /**
     * One callback attempt: sends at most one request and stores one delivery_attempts row. Idempotent per
     * (payment, stage, attempt): if the row exists the stored outcome is returned and nothing is sent.
     */
    async deliverCallbackAttempt(input: DeliverAttemptInput): Promise<DeliverAttemptResult> {
      return withHeartbeat(() => attempt(input));
    },
  };

  async function markDone(uuid: string): Promise<void> {
    await statementsOf(deps.db).done.execute({ uuid, now: new Date().toISOString() });
  }

  /** The attempt itself (see deliverCallbackAttempt). */
  async function attempt(input: DeliverAttemptInput): Promise<DeliverAttemptResult> {
    const { db } = deps;
    if (input.snapshot.uuid !== input.paymentUuid) {
      throw ApplicationFailure.nonRetryable(`snapshot uuid ${input.snapshot.uuid} is not payment ${input.paymentUuid}`, 'SnapshotMismatch');
    }
    const [row] = await statementsOf(db).target.execute({ uuid: input.paymentUuid, stage: input.stage, attempt: input.attempt });
    if (!row) throw ApplicationFailure.nonRetryable(`payment ${input.paymentUuid} not found`, 'PaymentNotFound');
    const done = row.stored;
    if (done) {
      // A run that stored a delivered confirmed attempt and died before marking the payment done (a worker
      // lost in between): the retry finishes that step instead of leaving the payment `sent`.
      if (done.confirmed === 1 && input.stage === 'confirmed') await markDone(input.paymentUuid);
      return storedResult(done);
    }
    if (input.stage === 'pending' && PAST_PENDING.has(row.result)) {
      return { outcome: 'skipped', status: null, error: 'payment is past the pending stage', nextTry: null };
    }

    const result = await performAttempt({
      target: { url: row.url, post: row.post, json: row.json, convert: row.convert },
      snapshot: input.snapshot,
      event: input.stage,
      signer: deps.signer,
      policy: { allowPrivate: deps.config.callbackAllowPrivate, allowHttp: deps.config.callbackAllowHttp },
      timeoutMs: deps.config.callbackTimeoutMs,
    });
    const retry = result.outcome === 'failed' && input.nextTryDelayMs !== null;
    const nextTry = retry ? new Date(Date.now() + (input.nextTryDelayMs as number)) : null;
    const delivered = result.outcome === 'delivered';
    await storeAttempt(db, {
      uuid: input.paymentUuid,
      stage: input.stage,
      attempt: input.attempt,
      url: result.requestUrl,
      body: result.body,
      status: result.status,
      error: result.error,
      nextTry: nextTry?.toISOString() ?? null,
      // SPEC 2.5: pending = this delivery is still outstanding (a retry is scheduled); confirmed = HTTP 200.
      pending: retry ? 1 : 0,
      confirmed: delivered ? 1 : 0,
      done: delivered && input.stage === 'confirmed',
      now: new Date().toISOString(),
    });
    deliveryAttemptsMetric.inc({ stage: input.stage, outcome: result.outcome });
    return { outcome: result.outcome, status: result.status, error: result.error, nextTry: nextTry?.toISOString() ?? null };
  }
}

/** The result a stored attempt had when it was made. */
function storedResult(row: typeof deliveryAttempts.$inferSelect): DeliverAttemptResult {
  const outcome: AttemptOutcomeKind = row.confirmed === 1 ? 'delivered' : isUnsafeError(row.error) ? 'unsafe' : 'failed';
  return { outcome, status: row.responseStatus, error: row.error, nextTry: row.nextTry?.toISOString() ?? null };
}

export type DeliveryActivities = ReturnType<typeof createDeliveryActivities>;
