import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

const GIVEN_ID = /^[\w.-]{1,64}$/;

/**
 * One structured line per request when its response is sent: `{ req: { id, method, path }, res: { status },
 * responseTime }`, the request ID taken from X-Request-Id (when it is a plain token) or made, and echoed
 * back. No bodies and no query strings: a callback URL is the merchant's identity, not something to spread
 * through logs. (pino-http wrote the same line but built a child logger per request, a fifth of a read's CPU.)
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && GIVEN_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', id);
    const start = performance.now();
    const done = (aborted: boolean) => {
      const path = req.originalUrl.split('?')[0];
      const line = { req: { id, method: req.method, path }, res: { status: res.statusCode }, responseTime: Math.round(performance.now() - start) };
      if (aborted) logger.warn(line, 'request aborted');
      else if (res.statusCode >= 500) logger.error(line, 'request errored');
      else logger.info(line, 'request completed');
    };
    res.once('finish', () => done(false));
    res.once('close', () => res.writableFinished || done(true));
    next();
  };
}
