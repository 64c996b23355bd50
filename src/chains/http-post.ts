import http from 'node:http';
import https from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/**
 * A JSON-RPC POST through node:http, for every call of the Solana and UTXO clients (EndpointPool) and the
 * watcher's block reads: less CPU than fetch (undici's streams and the Response around them), for a small
 * answer as for a mainnet block's of several megabytes. Compressed answers are asked for, as fetch asks
 * for them (a remote node's blocks are several times smaller so). Idle connections are closed after 4 s,
 * as fetch closes them: a node that is stopping waits for its open connections. A call in progress is not
 * limited by it (only a free socket is closed at its time-out).
 */
const IDLE_MS = 4_000;
const agents = { http: new http.Agent({ keepAlive: true, timeout: IDLE_MS }), https: new https.Agent({ keepAlive: true, timeout: IDLE_MS }) };

export interface PostAnswer {
  status: number;
  bytes: Buffer;
}

function decoded(encoding: string | undefined, body: Buffer): Buffer {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case '':
    case 'identity':
      return body;
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(body);
    case 'deflate':
      return inflateSync(body);
    case 'br':
      return brotliDecompressSync(body);
    default:
      throw new Error(`unsupported content-encoding ${encoding}`);
  }
}

/** `limit`: a time-out in milliseconds, or a signal that ends the call (none: the call waits for its answer). */
export function postJson(url: string, headers: Record<string, string>, body: string, limit?: number | AbortSignal): Promise<PostAnswer> {
  const u = new URL(url);
  const secure = u.protocol === 'https:';
  return new Promise<PostAnswer>((resolve, reject) => {
    const req = (secure ? https : http).request(
      u,
      {
        method: 'POST',
        agent: secure ? agents.https : agents.http,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'accept-encoding': 'gzip, deflate, br', ...headers },
        signal: typeof limit === 'number' ? AbortSignal.timeout(limit) : limit,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          size += c.length;
        });
        res.on('error', reject);
        res.on('end', () => {
          try {
            const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
            resolve({ status: res.statusCode ?? 0, bytes: decoded(res.headers['content-encoding'], raw) });
          } catch (e) {
            reject(e);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
