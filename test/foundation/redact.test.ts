import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { rpcErrorMessage } from '../../src/chains/rpc-errors';
import { endpointOf } from '../../src/chains/endpoints';
import { credentialsOf } from '../../src/chains/rpc-url';
import { describeError, scrubText } from '../../src/observability/redact';
import { scrubbedFailure } from '../../src/temporal/scrub-failures';

/** Log lines never carry a URL or a query string (a callback URL is a merchant's identity; RPC URLs may hold credentials). */
describe('describeError / scrubText', () => {
  it.each([
    ['a callback URL', 'delivery to https://shop.example/paid?order=42&token=s3cr3t failed', ['shop.example', 'order=42', 's3cr3t']],
    ['an RPC URL with credentials', 'connect http://user:pw@10.0.0.5:8332/wallet failed', ['user:pw', '10.0.0.5']],
    ['a bare query string', 'GET /api/btc/logs?callback=https%3A%2F%2Fshop.example%2F', ['callback=', 'shop.example']],
    ['a URL in another scheme', 'ws://node.example:8900/?api-key=abc closed', ['node.example', 'api-key']],
  ])('removes %s', (_name, text, leaks) => {
    const out = scrubText(text);
    for (const leak of leaks) expect(out).not.toContain(leak);
    expect(JSON.stringify(describeError(new Error(text)))).not.toMatch(new RegExp(leaks.map((l) => l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')));
  });

  it('keeps a drizzle error to its driver cause: no query, no parameters', () => {
    const cause = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
    const wrapped = Object.assign(new Error('Failed query: select * from payment_configs where callback_url = $1\nparams: https://shop.example/cb?order=1'), {
      name: 'DrizzleQueryError',
      query: 'select * from payment_configs where callback_url = $1',
      params: ['https://shop.example/cb?order=1'],
      cause,
    });
    expect(describeError(wrapped)).toEqual({ name: 'Error', code: '22021', message: 'invalid byte sequence for encoding "UTF8": 0x00' });
  });

  it('describes non-errors and bounds the length', () => {
    expect(describeError('plain ?x=1')).toEqual({ name: 'string', message: 'plain ?[query]' });
    // Words: a run of 5000 letters would be taken for a blob (base64 of signed bytes) and replaced.
    expect(describeError(new Error('word '.repeat(1000))).message.length).toBe(500);
  });
});

/** Signed transactions and RPC credentials stay out of errors, activity results and Temporal histories. */
describe('secrets in errors at their source', () => {
  const RAW = `0x02f8b1827a69808459682f00850${'ab'.repeat(90)}`;
  const B64 = `AQAB${'Zm9vYmFy'.repeat(30)}==`;
  const TXID = `0x${'c'.repeat(64)}`;

  it('scrubText removes signed-transaction-sized hex and base64, and keeps txids and signatures', () => {
    const out = scrubText(`broadcast ${RAW} as ${TXID} failed; solana ${B64} sig 5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW`);
    expect(out).not.toContain(RAW.slice(2, 60));
    expect(out).not.toContain(B64.slice(0, 60));
    expect(out).toContain(TXID);
    expect(out).toContain('5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW');
  });

  it('rpcErrorMessage keeps an RPC library\'s short message and the node\'s own error, never its request', () => {
    // The shape of ethers' errors: message = short message + request URL + payload (the signed bytes).
    const e = Object.assign(new Error(`could not coalesce error (error={ "code": -32000, "message": "nonce too low" }, payload={ "method": "eth_sendRawTransaction", "params": [ "${RAW}" ] }, info={ "requestUrl": "http://10.0.0.5:8545/?key=s3cr3t" }, code=UNKNOWN_ERROR)`), {
      shortMessage: 'could not coalesce error', error: { code: -32000, message: 'nonce too low' },
    });
    expect(rpcErrorMessage(e)).toBe('could not coalesce error: nonce too low');
    expect(rpcErrorMessage(new Error('request to https://user:pw@rpc.example/v2/KEY?x=1 failed'))).toBe('request to [url] failed');
    expect(rpcErrorMessage('down')).toBe('down');
  });

  it('endpointOf moves credentials into a basic Authorization header and keeps a key in the path or query', () => {
    const plain = endpointOf('https://rpc.example/v2/KEY?api-key=K');
    expect([plain.url, plain.headers]).toEqual(['https://rpc.example/v2/KEY?api-key=K', {}]);
    const auth = endpointOf('http://us%40er:p%3Ass@10.0.0.5:8545/?api-key=K');
    expect([auth.url, auth.headers]).toEqual(['http://10.0.0.5:8545/?api-key=K', { authorization: `Basic ${Buffer.from('us@er:p:ss').toString('base64')}` }]);
  });

  it('credentialsOf names what of an RPC URL may be a key, and rpcErrorMessage takes it out of a node\'s words', () => {
    const url = 'https://rpcuser:pa55word-x@rpc.example/v2/AbCdEf0123456789?api-key=K3y-0123456789&n=1';
    const credentials = credentialsOf(url);
    expect(credentials.sort()).toEqual(['AbCdEf0123456789', 'K3y-0123456789', 'pa55word-x']);
    expect(rpcErrorMessage(new Error('401: unknown API key K3y-0123456789 for project AbCdEf0123456789'), credentials)).toBe('401: unknown API key [credential] for project [credential]');
  });

  it('scrubbedFailure keeps type and retry flag, scrubs message and stack, drops the cause', () => {
    const cause = new Error('GET http://user:s3cr3t@node.example/ failed');
    class NodeDown extends Error {}
    const plain = scrubbedFailure(Object.assign(new NodeDown(`eth_call via http://user:s3cr3t@node.example/?k=s3cr3t: ${RAW}`), { cause })) as ApplicationFailure;
    expect(plain).toBeInstanceOf(ApplicationFailure);
    expect([plain.type, plain.nonRetryable, plain.cause]).toEqual(['NodeDown', false, undefined]);
    expect(plain.message).toBe('eth_call via [url] [hex]');
    expect(plain.stack).not.toMatch(/s3cr3t|abab/);
    const own = scrubbedFailure(ApplicationFailure.nonRetryable('refused by http://node.example/?key=s3cr3t', 'ForwardCollision', { n: 1 })) as ApplicationFailure;
    expect([own.type, own.nonRetryable, own.details, own.message]).toEqual(['ForwardCollision', true, [{ n: 1 }], 'refused by [url]']);
    const cancelled = new CancelledFailure('cancelled');
    expect(scrubbedFailure(cancelled)).toBe(cancelled);
  });
});
