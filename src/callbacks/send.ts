import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { CheckedDestination } from './destination';
import type { WireRequest } from './transport';

/** Stored merchant response bodies are cut to this many bytes. */
export const RESPONSE_BODY_LIMIT = 4096;

export interface SendResult {
  status: number;
  body: string;
}

/**
 * Sends the request to the checked address itself (no DNS lookup happens here), with the Host header
 * and TLS SNI/certificate name of the original hostname. Redirects are not followed: a 3xx is returned
 * like any other status. Rejects on timeout, refused connection or TLS failure.
 */
export function sendPinned(
  req: WireRequest,
  dest: CheckedDestination,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<SendResult> {
  const hostname = req.host.replace(/^\[|\]$/g, '');
  const allHeaders: Record<string, string> = {
    host: req.hostHeader,
    'user-agent': 'crypto-payment-gateway/1 (callback)',
    'content-length': String(req.body.length),
    ...headers,
  };
  if (req.contentType) allHeaders['content-type'] = req.contentType;
  const options: https.RequestOptions = {
    host: dest.address,
    family: dest.family,
    port: req.port,
    method: req.method,
    path: req.target,
    headers: allHeaders,
    agent: false,
  };
  if (req.protocol === 'https:' && !net.isIP(hostname)) options.servername = hostname;
  const client = req.protocol === 'https:' ? https : http;

  return new Promise<SendResult>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const request = client.request(options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < RESPONSE_BODY_LIMIT) chunks.push(chunk);
        size += chunk.length;
        // Enough kept: stop reading a large body instead of downloading it.
        if (size >= RESPONSE_BODY_LIMIT) {
          finish(() => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8') }));
          res.destroy();
        }
      });
      res.on('end', () => finish(() => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') })));
      res.on('error', (e) => finish(() => reject(e)));
    });
    const timer = setTimeout(() => {
      finish(() => reject(new Error(`timed out after ${timeoutMs} ms`)));
      request.destroy();
    }, timeoutMs);
    request.on('error', (e) => finish(() => reject(e)));
    request.end(req.body);
  });
}
