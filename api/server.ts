import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { RequestHandler } from 'express';
import { GatewayError } from '../src/domain/errors';

/**
 * The API's HTTP server: the app, and the spec's error body (SPEC 7) for requests Node's HTTP parser refuses
 * before the app sees them (a malformed request line or header, headers over the size limit, a broken chunked
 * body), where Node's own answer is an empty 400 or 431.
 */
export function createApiServer(app: http.RequestListener): http.Server {
  const server = http.createServer(app);
  server.on('clientError', answerClientError);
  return server;
}

function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  const open = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  // A connection reset, or a response already under way, leaves nothing to answer.
  if (err.code === 'ECONNRESET' || !socket.writable || open?.headersSent) {
    socket.destroy();
    return;
  }
  const e =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new GatewayError(1001, 'The request headers are too large.', { headers: ['Request headers exceed the size limit.'] })
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new GatewayError(1001, 'The request did not arrive in time.', { request: ['Request timed out.'] })
        : new GatewayError(1001, 'The request is not valid HTTP.', { request: ['Malformed HTTP request.'] });
  const body = JSON.stringify(e.toBody());
  socket.end(
    `HTTP/1.1 ${e.httpStatus} ${http.STATUS_CODES[e.httpStatus]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  // What the client still sends is never read.
  socket.once('finish', () => socket.destroy());
}

/**
 * A response sent before its request's body was read (a refusal of the body or of anything before it) closes
 * the connection: keeping it would make Node read the rest of the body, however long it is announced or
 * streamed, only to find the next request.
 */
export const closeUnread: RequestHandler = (req, res, next) => {
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  if (hasBody) {
    const writeHead = res.writeHead;
    res.writeHead = function (this: typeof res, ...args: Parameters<typeof writeHead>) {
      if (!req.complete) this.setHeader('Connection', 'close');
      return writeHead.apply(this, args);
    } as typeof writeHead;
  }
  next();
};
