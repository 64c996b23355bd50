import type { RequestHandler } from 'express';
import { GatewayError } from '../src/domain/errors';

/**
 * Client mistakes that Express and body-parser report as bare errors, turned into the spec's bodies
 * before the error handler sees them (SPEC 7): never a 5xx for bad input.
 */
export function requestError(err: unknown): GatewayError | undefined {
  const e = err as { status?: unknown; expose?: unknown; type?: unknown } | undefined;
  if (!e || typeof e !== 'object') return undefined;
  // The router could not percent-decode a path parameter; every parameter of the API is a ticker or part of one.
  if (err instanceof URIError && e.status === 400) {
    return new GatewayError(1101, 'The ticker in the path is not valid percent-encoding. Use a ticker from GET /api/cryptocurrencies.');
  }
  // A body that does not inflate (content-encoding gzip, deflate or br over corrupt bytes): body-parser
  // passes the zlib error on as a 400 without a type.
  if (e.expose === true && typeof e.status === 'number' && e.status >= 400 && e.status < 500 && typeof e.type !== 'string') {
    return new GatewayError(1001, 'The request body could not be decoded.', { body: ['The body does not match its Content-Encoding.'] });
  }
  return undefined;
}

/**
 * OPTIONS on any path is a method the API does not serve (SPEC 4, 7: 1002), instead of Express's automatic
 * `Allow` answer. No CORS: the merchant API is called server to server.
 */
export const refuseOptions: RequestHandler = (req, _res, next) => {
  if (req.method === 'OPTIONS') return next(new GatewayError(1002, `No route OPTIONS ${req.path}. Check method and path.`));
  next();
};
