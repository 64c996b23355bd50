import { z } from 'zod';
import { ERROR_TABLE, type ErrorCode } from '../src/domain/errors';
import type { ResponseConfig } from '@asteasolutions/zod-to-openapi';

/** Shapes shared by several routes; each route file keeps its own request and response schemas. */

export const ErrorBodySchema = z
  .strictObject({
    status: z.literal('error'),
    code: z.union(Object.keys(ERROR_TABLE).map((c) => z.literal(Number(c)))).meta({ description: 'Stable numeric code (SPEC 7)' }),
    error: z.enum(Object.values(ERROR_TABLE).map((e) => e.error) as [string, ...string[]]),
    message: z.string(),
    errors: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .meta({ description: 'Field-level errors: field name to messages (validation responses, code 1001)' }),
  })
  .meta({ id: 'Error', description: 'Error body of every non-2xx JSON response' });

export const TickerParams = z.object({
  ticker: z.string().meta({ description: 'Canonical ticker, e.g. btc or erc20_usdt', example: 'btc' }),
});

export const ChainTokenParams = z.object({
  chain: z.string().meta({ description: 'Chain part of a token ticker, e.g. erc20 or sol', example: 'erc20' }),
  token: z.string().meta({ description: 'Token part, e.g. usdt', example: 'usdt' }),
});

export const DecimalString = z.string().regex(/^\d+(\.\d+)?$/);

/** OpenAPI responses for the given error codes, grouped by HTTP status. */
export function errorResponses(codes: ErrorCode[]): Record<string, ResponseConfig> {
  const out: Record<string, ResponseConfig> = {};
  for (const code of [...codes, 1501 as const]) {
    const e = ERROR_TABLE[code];
    const key = String(e.http);
    const line = `${code} ${e.error}`;
    out[key] = {
      description: out[key] ? `${out[key].description}; ${line}` : line,
      content: { 'application/json': { schema: ErrorBodySchema } },
    };
  }
  return out;
}

/** A field-error map without a prototype: a parameter named `__proto__` is just a name. */
export const newFieldErrors = (): Record<string, string[]> => Object.create(null) as Record<string, string[]>;

/** Zod issues → the spec's `errors` object (field → messages). Unknown keys are reported per key. */
export function fieldErrors(error: z.ZodError, into: Record<string, string[]> = newFieldErrors()): Record<string, string[]> {
  const add = (field: string, msg: string) => (into[field] ??= []).includes(msg) || into[field].push(msg);
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) add(k.slice(0, 100), 'Unknown parameter.');
    } else {
      add(issue.path.length ? String(issue.path[0]) : 'body', issue.message);
    }
  }
  return into;
}
