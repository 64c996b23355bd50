import { FetchRequest, JsonRpcProvider, type JsonRpcPayload, type JsonRpcResult } from 'ethers';
import { rpcEndpoint } from '../rpc-url';

/** UTF-8 as ethers reads it: invalid bytes throw, and a byte order mark is kept (so JSON.parse refuses it too). */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * ethers' JsonRpcProvider with the answer's body decoded by the runtime instead of ethers' UTF-8 decoder in
 * JavaScript: that decoder was a third of the JSON-RPC transport's time on a worker's main thread while a
 * burst of deposits fell due (bench/pipeline.ts, CPU profile), a block with 200 transactions being a large
 * body. The request, its retries, redirects, throttling and timeout stay ethers' (FetchRequest). A body
 * that is not UTF-8 or not JSON is read again by ethers, which throws its own error for it, as before.
 */
/**
 * The node's URL as ethers' request: credentials in it go into an Authorization header (ethers refuses a URL
 * with credentials, and its setCredentials refuses plain HTTP, which a node on a private network may use).
 */
export function evmRpcRequest(rpcUrl: string): FetchRequest {
  const endpoint = rpcEndpoint(rpcUrl);
  const request = new FetchRequest(endpoint.url);
  if (endpoint.authorization) request.setHeader('authorization', endpoint.authorization);
  return request;
}

export class EvmRpcProvider extends JsonRpcProvider {
  // ethers types the answers as JsonRpcResult[], and its own _send returns JSON-RPC errors in it as well.
  override async _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    const request = this._getConnection();
    request.body = JSON.stringify(payload);
    request.setHeader('content-type', 'application/json');
    const response = await request.send();
    response.assertOk();
    let resp: unknown;
    try {
      resp = JSON.parse(utf8.decode(response.body ?? new Uint8Array()));
    } catch {
      resp = response.bodyJson;
    }
    return Array.isArray(resp) ? resp : [resp as JsonRpcResult];
  }
}
