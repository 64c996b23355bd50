import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { JsonRpcProvider, Network } from 'ethers';
import { EvmRpcProvider } from '../../src/chains/evm/provider';

/**
 * EvmRpcProvider decodes the node's answer itself: for every body below it must give what ethers'
 * JsonRpcProvider gives, the same result or an error with the same code, side by side on one server.
 */
describe('EvmRpcProvider', () => {
  let server: http.Server;
  let url: string;
  /** The raw body the server answers next, and its HTTP status; `"id":1` in it becomes the request's id. */
  let reply: { status: number; body: Buffer } = { status: 200, body: Buffer.alloc(0) };
  const net = Network.from(31337n);
  const options = { staticNetwork: net, cacheTimeout: -1, batchMaxCount: 1 };
  let lean: EvmRpcProvider;
  let stock: JsonRpcProvider;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { id } = JSON.parse(Buffer.concat(chunks).toString()) as { id: number };
        const at = reply.body.indexOf('"id":1,');
        const body = at < 0 ? reply.body : Buffer.concat([reply.body.subarray(0, at), Buffer.from(`"id":${id},`), reply.body.subarray(at + 7)]);
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    lean = new EvmRpcProvider(url, net, options);
    stock = new JsonRpcProvider(url, net, options);
  });
  afterAll(async () => {
    lean?.destroy();
    stock?.destroy();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** What a provider's send of one call settles to: its result, or its error's code and message. */
  async function outcome(provider: JsonRpcProvider): Promise<unknown> {
    try {
      return { result: await provider.send('eth_test', []) };
    } catch (e) {
      const err = e as { code?: string; shortMessage?: string };
      return { code: err.code, message: err.shortMessage };
    }
  }

  async function both(body: Buffer | string, status = 200): Promise<[unknown, unknown]> {
    reply = { status, body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8') };
    return [await outcome(lean), await outcome(stock)];
  }

  it('gives the same result for answers with multi-byte text, large bodies and nested data', async () => {
    const answers = [
      { jsonrpc: '2.0', id: 1, result: '0x1b4' },
      { jsonrpc: '2.0', id: 1, result: { name: 'Zürich €5 😀', list: [1, null, true, 'ß'] } },
      { jsonrpc: '2.0', id: 1, result: Array.from({ length: 4000 }, (_, i) => ({ hash: `0x${i.toString(16).padStart(64, '0')}`, note: 'ünïcödé' })) },
      { jsonrpc: '2.0', id: 1, result: null },
    ];
    for (const answer of answers) {
      const [got, expected] = await both(JSON.stringify(answer));
      expect(got).toEqual(expected);
      expect(got).toEqual({ result: answer.result });
    }
  });

  it('gives the same JSON-RPC error', async () => {
    const [got, expected] = await both(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'nonce too low' } }));
    expect(got).toEqual(expected);
    expect((got as { code: string }).code).toBeDefined();
  });

  it('throws the same error for a body that is not JSON, not UTF-8, empty or led by a byte order mark, and for a failed status', async () => {
    const bodies: [Buffer | string, number][] = [
      ['<html>bad gateway</html>', 200],
      [Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 200],
      [Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"result":"'), Buffer.from([0xc3]), Buffer.from('"}')]), 200],
      ['', 200],
      [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1"}')]), 200],
      ['{"jsonrpc":"2.0","id":1,"result":"0x1"}', 500],
    ];
    for (const [body, status] of bodies) {
      const [got, expected] = await both(body, status);
      expect(got).toEqual(expected);
      expect((got as { code?: string }).code).toEqual(expect.any(String));
    }
  });
});
