import { describeError, scrubText } from '../../src/observability/redact';

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
    expect(describeError(new Error('x'.repeat(5000))).message.length).toBe(500);
  });
});
