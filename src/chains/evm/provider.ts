import { FetchRequest, JsonRpcProvider, type FetchResponse, type JsonRpcApiProviderOptions, type JsonRpcPayload, type JsonRpcResult, type Networkish } from 'ethers';
import { EndpointPool, type Endpoint } from '../endpoints';

/** UTF-8 as ethers reads it: invalid bytes throw, and a byte order mark is kept (so JSON.parse refuses it too). */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * ethers' JsonRpcProvider with the answer's body decoded by the runtime instead of ethers' UTF-8 decoder in
 * JavaScript, which weighed on a worker's main thread while a burst of deposits fell due, a block of a busy
 * chain being a large body (docs/decisions/0008-evm-rpc-batching.md). The request, its retries, redirects, throttling and timeout stay ethers' (FetchRequest). A body
 * that is not UTF-8 or not JSON is read again by ethers, which throws its own error for it, as before.
 * The request goes to the network's endpoints (src/chains/endpoints.ts): a read to a healthy one, a
 * broadcast to every healthy one, each with its own URL and basic-auth header (ethers has no credentials
 * of a URL: they are a header here).
 */
export class EvmRpcProvider extends JsonRpcProvider {
  readonly pool: EndpointPool;

  constructor(endpoints: string | EndpointPool, network?: Networkish, options?: JsonRpcApiProviderOptions) {
    const pool = typeof endpoints === 'string' ? new EndpointPool('evm', endpoints) : endpoints;
    // The base request has no header of any endpoint: each call sets its own endpoint's.
    super(new FetchRequest(pool.primary.url), network, options);
    this.pool = pool;
  }

  // ethers types the answers as JsonRpcResult[], and its own _send returns JSON-RPC errors in it as well.
  override async _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    const body = JSON.stringify(payload);
    const post = async (ep: Endpoint): Promise<FetchResponse> => {
      const request = this._getConnection();
      request.url = ep.url;
      for (const [k, v] of Object.entries(ep.headers)) request.setHeader(k, v);
      request.body = body;
      request.setHeader('content-type', 'application/json');
      const response = await request.send();
      response.assertOk();
      return response;
    };
    const response = await this.pool.send(body, post, (r) => Buffer.from(r.body ?? new Uint8Array()).toString('utf8'));
    let resp: unknown;
    try {
      resp = JSON.parse(utf8.decode(response.body ?? new Uint8Array()));
    } catch {
      resp = response.bodyJson;
    }
    return Array.isArray(resp) ? resp : [resp as JsonRpcResult];
  }
}
