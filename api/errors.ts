import type { ErrorRequestHandler, RequestHandler } from 'express';
import { GatewayError } from '../src/domain/errors';
import { requestError } from './request-errors';

export type LogFn = (msg: string, err: unknown) => void;

/** Unknown routes and methods: 1002 with the spec's body. */
export const notFound: RequestHandler = (req, res) => {
  const e = new GatewayError(1002, `No route ${req.method} ${req.path}. Check method and path.`);
  res.status(e.httpStatus).json(e.toBody());
};

/**
 * The only place where an internal failure becomes a public one. Body parser failures are the client's
 * (1001); anything unexpected is 1501 with no stack, message or internals in the body.
 */
export function errorHandler(log: LogFn): ErrorRequestHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) return next(err);
    err = requestError(err) ?? err;
    let e: GatewayError;
    if (err instanceof GatewayError) e = err;
    else if (err?.type === 'entity.parse.failed') e = new GatewayError(1001, 'The request body is not valid JSON.', { body: ['Malformed JSON.'] });
    else if (err?.type === 'entity.too.large') e = new GatewayError(1001, 'The request body is too large.', { body: ['Request body exceeds the size limit.'] });
    else if (typeof err?.type === 'string' && err.type.startsWith('encoding.') || err?.type === 'charset.unsupported')
      e = new GatewayError(1001, 'The request body encoding is not supported.', { body: ['Unsupported encoding.'] });
    else if (err?.type === 'parameters.too.many')
      e = new GatewayError(1001, 'The request body has too many parameters.', { body: ['Too many parameters.'] });
    else if (typeof err?.type === 'string' && err?.expose === true && err.status >= 400 && err.status < 500)
      // Any other body-parser refusal (aborted or truncated body, …) is the client's; its text stays out.
      e = new GatewayError(1001, 'The request body could not be read.', { body: ['Unreadable request body.'] });
    else {
      log('unhandled API error', err);
      e = new GatewayError(1501);
    }
    res.status(e.httpStatus).json(e.toBody());
  };
}
