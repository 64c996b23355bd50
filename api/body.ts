import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../src/domain/errors';
import { parseParams } from './params';
import { newFieldErrors } from './schemas';

/** The largest create body, on the wire and decoded alike (SPEC 4.6's parameters fit many times over). */
export const BODY_LIMIT = 16 * 1024;

const tooLarge = () => new GatewayError(1001, 'The request body is too large.', { body: ['Request body exceeds the size limit.'] });
const unreadable = () => new GatewayError(1001, 'The request body could not be decoded.', { body: ['The body does not match its Content-Encoding.'] });

type BodyType = 'json' | 'form';

/** The body's type by its Content-Type (media type and charset), or a 1001 that names the problem. */
function bodyType(req: IncomingMessage): BodyType {
  const [media, ...params] = (req.headers['content-type'] ?? '').split(';').map((p) => p.trim().toLowerCase());
  const type = media === 'application/json' ? 'json' : media === 'application/x-www-form-urlencoded' ? 'form' : undefined;
  if (!type) {
    throw new GatewayError(1001, 'POST create takes an application/json or application/x-www-form-urlencoded body.', { body: ['Unsupported content type.'] });
  }
  const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/^"|"$/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new GatewayError(1001, 'The request body encoding is not supported.', { body: ['Unsupported encoding.'] });
  }
  return type;
}

function decoder(req: IncomingMessage): Transform | undefined {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity') return undefined;
  if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.createGunzip();
  if (encoding === 'deflate') return zlib.createInflate();
  if (encoding === 'br') return zlib.createBrotliDecompress();
  throw new GatewayError(1001, 'The request body encoding is not supported.', { body: ['Unsupported encoding.'] });
}

/**
 * The body's bytes, decoded, at most BODY_LIMIT of them on the wire and after decoding. A declared length
 * over the limit is refused before a byte is read, and a body that grows past it (chunked, or a small
 * compressed one that inflates) is refused the moment it does: nothing reads on. The request is then left
 * unread, and closeUnread (api/server.ts) closes its connection once the refusal is sent.
 */
function readLimited(req: IncomingMessage): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > BODY_LIMIT) return Promise.reject(tooLarge());
  const decode = decoder(req);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let wire = 0;
    let size = 0;
    let settled = false;
    const stop = (e?: unknown) => {
      if (settled) return;
      settled = true;
      req.off('data', onWire);
      req.off('end', onWireEnd);
      req.pause();
      if (decode) {
        decode.removeAllListeners();
        decode.on('error', () => undefined);
        decode.destroy();
      }
      if (e) reject(e);
      else resolve(Buffer.concat(chunks, size));
    };
    const onDecoded = (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) stop(tooLarge());
      else chunks.push(chunk);
    };
    const onWire = (chunk: Buffer) => {
      wire += chunk.length;
      if (wire > BODY_LIMIT) return stop(tooLarge());
      if (decode) decode.write(chunk);
      else onDecoded(chunk);
    };
    const onWireEnd = () => (decode ? decode.end() : stop());
    if (decode) {
      decode.on('data', onDecoded);
      decode.on('end', () => stop());
      decode.on('error', () => stop(unreadable()));
    }
    req.on('data', onWire);
    req.on('end', onWireEnd);
    // The client went away: there is no one to answer.
    req.on('aborted', () => stop(new GatewayError(1001, 'The request body could not be read.', { body: ['Unreadable request body.'] })));
  });
}

/**
 * The first name a JSON object body gives twice, at its top level: JSON.parse keeps the last silently, where
 * a query or a form with a name twice is refused (api/params.ts), so the JSON transport refuses it too.
 */
export function repeatedJsonName(text: string): string | undefined {
  const seen = new Set<string>();
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      // A string at the top object's level followed by ':' is one of its names (the text is valid JSON).
      let after = end + 1;
      while (after < text.length && ' \t\n\r'.includes(text[after])) after++;
      if (depth === 1 && text[after] === ':') {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        if (seen.has(name)) return name;
        seen.add(name);
      }
      i = end;
    }
  }
  return undefined;
}

/**
 * POST create's body (JSON or form) as req.body, read under BODY_LIMIT; the form parsed by the same rule as
 * a GET query (api/params.ts). Any refusal is the spec's 1001.
 */
export function createBody<P>(req: Request<P>, _res: Response, next: NextFunction): void {
  let type: BodyType;
  try {
    type = bodyType(req);
  } catch (e) {
    return next(e);
  }
  readLimited(req).then(
    (bytes) => {
      const text = bytes.toString('utf8');
      if (type === 'form') return void (req.body = parseParams(text, 'body'));
      try {
        req.body = text === '' ? undefined : JSON.parse(text);
      } catch {
        throw new GatewayError(1001, 'The request body is not valid JSON.', { body: ['Malformed JSON.'] });
      }
      const twice = repeatedJsonName(text);
      if (twice !== undefined) throw new GatewayError(1001, undefined, { ...newFieldErrors(), [twice.slice(0, 100)]: ['Must be given once.'] });
    },
  ).then(() => next(), next);
}
