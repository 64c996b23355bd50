import { Router } from 'express';
import { z } from 'zod';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { configWithPayments, type DeliveryAttemptRow, type PaymentRowForLogs } from '../../src/db/queries/configs';
import { tickerFromPath } from '../../src/domain/assets';
import { GatewayError } from '../../src/domain/errors';
import { showsFinalityOnly, shownConfirmations } from '../../src/domain/finality';
import { formatUnits } from '../../src/domain/money';
import { routeAsset } from '../asset-cache';
import type { AssetView } from '../assets';
import { sendCached } from '../cached-body';
import type { PublicDeps } from '../deps';
import { DecimalString, TickerParams, errorResponses, fieldErrors } from '../schemas';
import { CALLBACK_URL_MAX } from '../validation/callback-url';

/** SPEC 4.7, 2.4, 2.5: a configuration and every payment of one ticker with its delivery attempts. */

export const LogsQuery = z.strictObject({
  callback: z
    .string({ error: (iss) => (iss.input === undefined ? 'Required.' : 'Must be a single string value.') })
    .min(1, { error: 'Required.' })
    .max(CALLBACK_URL_MAX, { error: `Must be at most ${CALLBACK_URL_MAX} characters.` })
    // No stored callback URL holds a control character (create takes printable ASCII only), and the database refuses NUL.
    .regex(/^[^\x00-\x1f\x7f]*$/, { error: 'Must not contain control characters.' })
    .meta({ description: 'The exact callback URL used at creation, URL-encoded' }),
});

const DateTime = z.iso.datetime({ offset: true });

export const DeliveryAttempt = z
  .strictObject({
    request_url: z.string(),
    responses: z.string().nullable(),
    response_status: z.int().nullable(),
    next_try: DateTime.nullable(),
    pending: z.union([z.literal(0), z.literal(1)]).meta({ description: 'Delivery-attempt pending flag, not finality' }),
    confirmed: z.union([z.literal(0), z.literal(1)]).meta({ description: 'Delivery-attempt success flag, not finality' }),
  })
  .meta({ id: 'DeliveryAttempt' });

export const PaymentRecord = z
  .strictObject({
    uuid: z.uuid(),
    txid_in: z.string().nullable(),
    vout: z.int().min(0).optional().meta({ description: 'UTXO deposits only' }),
    txid_out: z.string().nullable(),
    value_coin: DecimalString,
    value_forwarded_coin: DecimalString,
    confirmations: z.int().min(0),
    last_update: DateTime.nullable(),
    result: z.enum(['pending', 'processing', 'sent', 'done', 'failed']),
    fee_percent: DecimalString,
    fee_coin: DecimalString,
    price: DecimalString.nullable(),
    coin: z.string(),
    logs: z.array(DeliveryAttempt),
  })
  .meta({ id: 'PaymentRecord' });

export const LogsResponse = z
  .strictObject({
    status: z.literal('success'),
    address_in: z.string(),
    address_out: z.string(),
    callback_url: z.string(),
    notify_pending: z.boolean(),
    notify_confirmations: z.int(),
    priority: z.enum(['slow', 'default', 'fast']),
    callbacks: z.array(PaymentRecord),
  })
  .meta({ id: 'Logs' });

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const flag = (n: number): 0 | 1 => (n ? 1 : 0);

function attemptRecord(a: DeliveryAttemptRow): z.infer<typeof DeliveryAttempt> {
  return {
    request_url: a.requestUrl,
    responses: a.responseBody,
    response_status: a.responseStatus,
    next_try: iso(a.nextTry),
    pending: flag(a.pending),
    confirmed: flag(a.confirmed),
  };
}

/**
 * Confirmations of the incoming deposit (SPEC 2.4). While it waits for finality the workflow reads the
 * chain only when the watcher tells it to, so the stored count can lag: the watcher's newest block
 * (its cursor) gives the live count of a mined deposit, never less than what was stored.
 */
export function liveConfirmations(p: PaymentRowForLogs, tip: bigint | null, network: string): number {
  const counted = p.result === 'pending' && p.blockNumber !== null && tip !== null && tip >= p.blockNumber && !showsFinalityOnly(network);
  return shownConfirmations(network, counted ? Math.max(p.confirmations, Number(tip - p.blockNumber! + 1n)) : p.confirmations);
}

function paymentRecord(v: AssetView, p: PaymentRowForLogs, attempts: DeliveryAttemptRow[], tip: bigint | null): z.infer<typeof PaymentRecord> {
  const d = v.asset.decimals;
  return {
    uuid: p.uuid,
    txid_in: p.txidIn,
    ...(v.network.family === 'utxo' && p.vout !== null && p.vout >= 0 ? { vout: p.vout } : {}),
    txid_out: p.txidOut,
    value_coin: formatUnits(BigInt(p.valueBase), d),
    value_forwarded_coin: formatUnits(BigInt(p.forwardedBase), d),
    confirmations: liveConfirmations(p, tip, v.network.id),
    last_update: iso(p.lastUpdate),
    result: p.result as z.infer<typeof PaymentRecord>['result'],
    fee_percent: p.feePercent,
    fee_coin: formatUnits(BigInt(p.feeBase), d),
    price: p.price,
    coin: v.asset.ticker,
    logs: attempts.map(attemptRecord),
  };
}

/** Whether the query is exactly `callback` once, as a string: the only shape a kept body answers. */
function onlyCallback(query: Record<string, unknown>): string | undefined {
  let n = 0;
  for (const k in query) if (++n > 1 || k !== 'callback') return undefined;
  return typeof query.callback === 'string' ? query.callback : undefined;
}

export function logsRoutes(deps: PublicDeps, r: Router = Router()): Router {
  r.get('/api/:ticker/logs', async (req, res) => {
    // Reconciliation stays possible for an asset the operator disabled later: any known ticker.
    const v = await routeAsset(deps, tickerFromPath(req.params.ticker), { servedOnly: false });
    const cache = deps.logsCache;
    // A kept body answered a query that passed LogsQuery with this very callback string.
    const callback = cache && onlyCallback(req.query as Record<string, unknown>);
    const key = callback === undefined ? undefined : `${v.asset.ticker}\n${callback}`;
    const kept = key === undefined ? undefined : await cache!.lookupServed(key);
    if (kept !== undefined) {
      sendCached(res, kept);
      return;
    }
    const since = cache?.begin() ?? -1;
    const q = LogsQuery.safeParse({ ...(req.query as object) });
    if (!q.success) throw new GatewayError(1001, undefined, fieldErrors(q.error));
    const found = await configWithPayments(deps.db, q.data.callback, v.asset.ticker);
    if (!found || found.config.family !== v.network.addressFamily) {
      throw new GatewayError(1201, 'No payment configuration matches this ticker and callback URL. Send the exact stored URL.');
    }
    const { config, payments: rows } = found;
    const body: z.infer<typeof LogsResponse> = {
      status: 'success',
      address_in: config.addressIn,
      address_out: config.addressOut,
      callback_url: config.callbackUrl,
      notify_pending: config.notifyPending,
      notify_confirmations: config.notifyConfirmations,
      priority: config.priority as z.infer<typeof LogsResponse>['priority'],
      callbacks: rows.map(({ payment, attempts, tip }) => paymentRecord(v, payment, attempts, tip)),
    };
    const text = JSON.stringify(body);
    // A mined deposit still waiting counts its confirmations from the chain's tip: the body holds until the tip moves.
    const fromTip = !showsFinalityOnly(v.network.id) && rows.some(({ payment: p }) => p.result === 'pending' && p.blockNumber !== null);
    if (key !== undefined) cache!.put(key, fromTip ? [config.id, `tip:${v.network.id}`] : [config.id], text, since);
    res.type('application/json').send(text);
  });
  return r;
}

export function registerLogsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/{ticker}/logs',
    summary: 'Payments and delivery attempts of a callback URL',
    description: 'For reconciliation, not a fulfilment signal.',
    request: { params: TickerParams, query: LogsQuery },
    responses: { 200: { description: 'Logs', content: { 'application/json': { schema: LogsResponse } } }, ...errorResponses([1001, 1101, 1201]) },
  });
}
