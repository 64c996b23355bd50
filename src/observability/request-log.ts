import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { observeHttp } from './metrics';

const GIVEN_ID = /^[\w.-]{1,64}$/;

/**
 * What every public request leaves behind, recorded when its response is done:
 * - one structured line, `{ req: { id, method, path }, res: { status }, responseTime }`, with the request ID
 *   taken from X-Request-Id (when it is a plain token) or made, and echoed back. No bodies and no query
 *   strings: a callback URL is the merchant's identity, not something to spread through logs. (pino-http
 *   wrote the same line but built a child logger per request, a fifth of a read's CPU.)
 * - for an answered request, its count and latency under the matched route pattern (never the raw URL).
 * One listener per response ('close' comes after 'finish', or alone when the client went away first).
 */
export function observeRequests(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && GIVEN_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', id);
    const start = performance.now();
    res.once('close', () => {
      const ms = performance.now() - start;
      const path = req.originalUrl.split('?')[0];
      const line = { req: { id, method: req.method, path }, res: { status: res.statusCode }, responseTime: Math.round(ms) };
      if (!res.writableFinished) return logger.warn(line, 'request aborted');
      observeHttp(req.method, req.route?.path ? `${req.baseUrl}${req.route.path as string}` : 'unmatched', res.statusCode, ms / 1000);
      if (res.statusCode >= 500) logger.error(line, 'request errored');
      else logger.info(line, 'request completed');
    });
    next();
  };
}
