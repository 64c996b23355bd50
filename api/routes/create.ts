import { Router, type Request } from 'express';
import { z } from 'zod';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { canonicalIfValid } from '../../src/chains/addresses';
import { acceptTicker, type NewPaymentConfig } from '../../src/db/queries/configs';
import { DerivedAddressMissingError, createLookup, type CreatedConfig } from '../../src/db/queries/create-config';
import { AddressPoolEmptyError } from '../../src/db/queries/public-material';
import { addressPoolEmpty } from '../../src/observability/metrics';
import { tickerFromPath, PRIORITIES, type Priority } from '../../src/domain/assets';
import { GatewayError, type FieldErrors } from '../../src/domain/errors';
import { requiredConfirmations, showsFinalityOnly } from '../../src/domain/finality';
import { formatUnits } from '../../src/domain/money';
import { routeAsset } from '../asset-cache';
import { confirmationsRequired, type AssetView } from '../assets';
import { createBody } from '../body';
import { CreateBatcher } from '../create-batch';
import { createRateLimit } from '../rate-limit';
import { parseParams } from '../params';
import type { PublicDeps } from '../deps';
import { ChainTokenParams, DecimalString, TickerParams, errorResponses, fieldErrors, newFieldErrors } from '../schemas';
import { callbackUrlProblems, CALLBACK_URL_MAX } from '../validation/callback-url';

/** SPEC 4.6: create (or find) the payment configuration of a callback URL. */

const ADDRESS_OUT_MAX = 500;

const flag = (description: string) =>
  z
    .union([z.literal(0), z.literal(1), z.literal('0'), z.literal('1')], { error: 'Must be 0 or 1.' })
    .optional()
    .meta({ description: `${description} (0 or 1, default 0)` });

const text = (max: number) =>
  z
    .string({ error: (iss) => (iss.input === undefined ? 'Required.' : 'Must be a single string value.') })
    .max(max, { error: `Must be at most ${max} characters.` });

/** The parameters of all three transports (GET query, POST form, POST JSON); numbers may come as text. */
export const CreateParams = z
  .strictObject(
    {
      callback_url: text(CALLBACK_URL_MAX).meta({
        description: 'Absolute http(s) callback URL, stored exactly as sent: the identity of the configuration',
        example: 'https://shop.example/paid?order=42',
      }),
      address_out: text(ADDRESS_OUT_MAX).meta({ description: 'Merchant payout address on the ticker\'s network' }),
      pending: flag('1 enables the informational pending callback'),
      confirmations: z
        .union([z.int().min(1), z.string().regex(/^[1-9][0-9]{0,8}$/)], { error: 'Must be an integer of at least 1.' })
        .optional()
        .meta({ description: 'Confirmation override within the operator maximum (numeric chains; ignored by the sol family)' }),
      post: flag('0 callback by GET, 1 by POST'),
      json: flag('with post=1: 0 form body, 1 JSON body'),
      priority: z.enum(PRIORITIES as [Priority, ...Priority[]], { error: 'Must be one of slow, default, fast.' }).optional().meta({ description: 'Forwarding priority, default "default"' }),
      convert: flag('1 adds USDT conversion fields to the confirmed callback'),
    },
    { error: (iss) => (iss.code === 'invalid_type' ? 'Send the parameters as an object.' : undefined) },
  )
  .meta({ id: 'CreateParameters' });

export const CreateResponse = z
  .strictObject({
    address_in: z.string().meta({ description: 'Deposit address for the customer' }),
    address_out: z.string(),
    callback_url: z.string(),
    priority: z.enum(['slow', 'default', 'fast']),
    minimum_transaction_coin: DecimalString.meta({ description: 'Minimum at creation time; not an invoice amount' }),
    status: z.literal('success'),
  })
  .meta({ id: 'PaymentConfiguration' });

/** The parameters of a GET query, or the body POST create read (api/body.ts): the query and a form by one rule. */
function readParams(req: Request): unknown {
  if (req.method !== 'GET') return req.body;
  const q = req.url.indexOf('?');
  return parseParams(q < 0 ? '' : req.url.slice(q + 1), 'query');
}

/** What a valid request asks for: a new configuration's fields. */
interface Checked {
  input: NewPaymentConfig;
  /** address_out in its canonical form: what the deposit-address check compares. */
  outCanonical: string;
}

/**
 * Every problem of the request at once (one 1001 lists all failing fields), then the priority check. The
 * one check that needs the database (is address_out one of our deposit addresses?) is made by the create
 * statement itself; only a request already refused reads it alone, to list that problem too.
 */
async function check(deps: PublicDeps, raw: unknown, v: AssetView): Promise<Checked> {
  const errors: FieldErrors = newFieldErrors();
  const parsed = CreateParams.safeParse(raw);
  if (!parsed.success) fieldErrors(parsed.error, errors);
  const p = (parsed.success ? parsed.data : (raw ?? {})) as Record<string, unknown>;
  const add = (field: string, messages: string[]) => messages.length && (errors[field] = [...(errors[field] ?? []), ...messages]);
  if (typeof p.callback_url === 'string' && !errors.callback_url) {
    add('callback_url', callbackUrlProblems(p.callback_url, { allowHttp: deps.config.callbackAllowHttp }));
  }
  let outCanonical: string | undefined;
  if (typeof p.address_out === 'string' && !errors.address_out) {
    const mode = v.runtime!.mode;
    outCanonical = p.address_out === '' ? undefined : canonicalIfValid(v.network.id, mode, p.address_out);
    if (outCanonical === undefined) add('address_out', [`Must be a valid ${v.network.name} address for ${v.asset.ticker}.`]);
  }
  if (parsed.success && p.confirmations !== undefined && !showsFinalityOnly(v.network.id) && Number(p.confirmations) > v.asset.maxConfirmations) {
    add('confirmations', [`Must be at most ${v.asset.maxConfirmations} for ${v.asset.ticker}.`]);
  }
  const priority = parsed.success ? (parsed.data.priority ?? 'default') : undefined;
  const refused = Object.keys(errors).length > 0 || !parsed.success || !v.network.priorities.includes(priority!);
  if (refused) {
    if (outCanonical !== undefined) {
      const found = await createLookup(deps.db, undefined, v.network.addressFamily, outCanonical);
      if (found.outIsDeposit) add('address_out', [OUT_IS_DEPOSIT]);
    }
    if (Object.keys(errors).length > 0 || !parsed.success) throw new GatewayError(1001, undefined, errors);
    throw new GatewayError(1103, `The ${v.network.name} network supports priority ${v.network.priorities.join(', ')}; not ${priority}.`);
  }
  const q = parsed.data;
  const input: NewPaymentConfig = {
    callbackUrl: q.callback_url,
    ticker: v.asset.ticker,
    family: v.network.addressFamily,
    addressOut: q.address_out,
    notifyPending: Number(q.pending ?? 0) === 1,
    notifyConfirmations: requiredConfirmations(v.network.id, Number(q.confirmations ?? confirmationsRequired(v))),
    post: Number(q.post ?? 0),
    json: Number(q.json ?? 0),
    convert: Number(q.convert ?? 0),
    priority: priority!,
    // The minimum as GET info states it at this moment (SPEC 2.3: a creation-time snapshot).
    minimumTransactionBase: v.minimumStated,
  };
  return { input, outCanonical: outCanonical! };
}

const CALLBACK_OF_ANOTHER_PAYOUT = 'The callback URL is registered with another payout address.';

/** Forwarding into one of the gateway's own deposit addresses would loop payments through it. */
const OUT_IS_DEPOSIT = 'Must not be a deposit address of this gateway.';

/** How long a create waits for a dry pool's refill, and how often it looks again meanwhile. */
const POOL_WAIT_MS = 10_000;
const POOL_RETRY_MS = 100;

/** Retries of a create whose index had no stored derived address yet (each stores the next ones first). */
const MISSING_ADDRESS_RETRIES = 5;

/** A new configuration of the callback (`created`), or the one stored before (or by another create meanwhile). */
async function createOrFind(deps: PublicDeps, creates: CreateBatcher, v: AssetView, c: Checked): Promise<{ config: CreatedConfig | undefined; created: boolean }> {
  const { from, supply } = await deps.addresses.depositAddresses(v.network.id, v.runtime!.mode);
  if (supply && !supply.stocked) await supply.refill();
  let waitedMs = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      const { outIsDeposit, existing, made } = await creates.create(c.input, from, c.outCanonical);
      if (outIsDeposit) throw new GatewayError(1001, undefined, { ...newFieldErrors(), address_out: [OUT_IS_DEPOSIT] });
      if (made) {
        supply?.noteTaken(made.derivationIndex);
        return { config: made, created: true };
      }
      return { config: existing ?? (await createLookup(deps.db, c.input.callbackUrl, c.input.family, undefined)).existing, created: false };
    } catch (e) {
      // A dry pool is the gateway's problem, not the merchant's: the create waits for the worker's refill
      // (it polls the pool several times a second), counted; 1501 only if no address comes within the wait.
      if (e instanceof AddressPoolEmptyError) {
        addressPoolEmpty.inc({ network: e.network });
        if (waitedMs >= POOL_WAIT_MS) throw new GatewayError(1501);
        await new Promise((r) => setTimeout(r, POOL_RETRY_MS));
        waitedMs += POOL_RETRY_MS;
        continue;
      }
      if (!(e instanceof DerivedAddressMissingError) || !supply || attempt >= MISSING_ADDRESS_RETRIES) throw e;
      await supply.refill();
    }
  }
}

async function create(deps: PublicDeps, creates: CreateBatcher, ticker: string, req: Request) {
  const v = await routeAsset(deps, ticker, { servedOnly: true });
  const checked = await check(deps, readParams(req), v);
  const { config, created } = await createOrFind(deps, creates, v, checked);
  if (!config) throw new Error('payment configuration vanished after a callback_url conflict');
  if (config.family !== checked.input.family) {
    throw new GatewayError(1202, `This callback URL already belongs to the ${config.family} address family. Use a new callback URL.`);
  }
  // A callback URL belongs to one payout (DESIGN 15): whoever knows a shop's callback URL, or an alias of it,
  // gets no configuration of it with a payout of their own, nor sees the shop's.
  if (!created && canonicalIfValid(v.network.id, v.runtime!.mode, config.addressOut) !== checked.outCanonical) {
    throw new GatewayError(1001, undefined, { ...newFieldErrors(), address_out: [CALLBACK_OF_ANOTHER_PAYOUT] });
  }
  // The configuration now takes deposits of this asset too (the watcher matches on it); one made here already does.
  if (!created) await acceptTicker(deps.db, config.id, v.asset.ticker);
  // Another asset of the same family reuses the configuration; its minimum is that asset's, taken now.
  const minimum =
    config.ticker === v.asset.ticker && config.minimumTransactionBase !== null ? BigInt(config.minimumTransactionBase) : v.minimumStated;
  return {
    address_in: config.addressIn,
    address_out: config.addressOut,
    callback_url: config.callbackUrl,
    priority: config.priority as Priority,
    minimum_transaction_coin: formatUnits(minimum, v.asset.decimals),
    status: 'success' as const,
  };
}

export function createRoutes(deps: PublicDeps, r: Router = Router()): Router {
  const creates = new CreateBatcher(deps.db);
  // After the body (at most 16 kB) is read, so that a refused client keeps its connection for its retry.
  const limit = createRateLimit(deps.config.createRateLimit);
  // HEAD would run the GET handler and create a configuration without showing it: not a create method.
  r.head(['/api/:ticker/create', '/api/:chain/:token/create'], (_req, _res, next) => next('router'));
  r.get('/api/:ticker/create', limit, async (req, res) => {
    res.json(await create(deps, creates, tickerFromPath(req.params.ticker), req));
  });
  r.get('/api/:chain/:token/create', limit, async (req, res) => {
    res.json(await create(deps, creates, tickerFromPath(req.params.chain, req.params.token), req));
  });
  r.post('/api/:ticker/create', createBody, limit, async (req, res) => {
    res.json(await create(deps, creates, tickerFromPath(req.params.ticker), req));
  });
  r.post('/api/:chain/:token/create', createBody, limit, async (req, res) => {
    res.json(await create(deps, creates, tickerFromPath(req.params.chain, req.params.token), req));
  });
  return r;
}

export function registerCreateOpenApi(registry: OpenAPIRegistry): void {
  const responses = {
    200: { description: 'The payment configuration (new, or the stored one of this callback URL)', content: { 'application/json': { schema: CreateResponse } } },
    ...errorResponses([1001, 1003, 1101, 1102, 1103, 1202]),
  };
  const description =
    'Creates the payment configuration of a callback URL, or returns the stored, immutable one when the URL (or a spelling ' +
    'of it whose callbacks are the same on the wire: host case, default port, dot segments, fragment, empty query pairs) ' +
    'is already known in the same address family with the same address_out. Another address_out is refused with 1001 ' +
    '(errors.address_out), another family with 1202. Parameters by GET query, POST form or POST JSON. Each client may ' +
    'create CREATE_RATE_LIMIT times a minute (operator setting, 120 by default); past it 429 1003 with Retry-After.';
  for (const [path, params] of [
    ['/api/{ticker}/create', TickerParams],
    ['/api/{chain}/{token}/create', ChainTokenParams],
  ] as const) {
    registry.registerPath({ method: 'get', path, summary: 'Create payment configuration (query)', description, request: { params, query: CreateParams }, responses });
    registry.registerPath({
      method: 'post',
      path,
      summary: 'Create payment configuration (form or JSON body)',
      description,
      request: {
        params,
        body: { required: true, content: { 'application/json': { schema: CreateParams }, 'application/x-www-form-urlencoded': { schema: CreateParams } } },
      },
      responses,
    });
  }
}
