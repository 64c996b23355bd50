import type { Response } from 'express';
import etag from 'etag';

/**
 * A JSON body served many times as the same bytes (catalog, info, a kept logs body): its bytes and its ETag
 * made once. res.send of a string encodes it and hashes it for the ETag (SHA-1) at every request; with
 * the ETag already set it hashes nothing. The ETag is the one Express makes by default (weak, from the
 * bytes), so If-None-Match and 304 behave as before.
 */
export interface CachedBody {
  readonly bytes: Buffer;
  readonly etag: string;
}

export function cachedBody(text: string): CachedBody {
  const bytes = Buffer.from(text, 'utf8');
  return { bytes, etag: etag(bytes, { weak: true }) };
}

export function sendCached(res: Response, body: CachedBody): void {
  res.type('application/json');
  res.setHeader('ETag', body.etag);
  res.send(body.bytes);
}
