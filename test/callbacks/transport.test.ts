import { buildCallbackRequest } from '../../src/callbacks/attempt';
import { canonicalBytes, hostnameOf } from '../../src/callbacks/canonical';
import { merchantPairs } from '../../src/callbacks/transport';
import { btcSnapshot } from './fixtures/payload';

const target = (url: string, post = 0, json = 0) => ({ url, post, json, convert: 0 });

describe('callback transports (SPEC 4.9)', () => {
  it('GET appends the fields once after the merchant query, in order, with an empty body and no fragment', () => {
    const req = buildCallbackRequest(target('https://Shop.Example:8443/cb/pay?order=42&b=%2Fx&a=1#frag'), btcSnapshot, 'pending');
    expect(req.method).toBe('GET');
    expect(req.host).toBe('shop.example');
    expect(req.hostHeader).toBe('shop.example:8443');
    expect(req.body.length).toBe(0);
    expect(req.target.startsWith('/cb/pay?order=42&b=%2Fx&a=1&uuid=')).toBe(true);
    expect(req.target).not.toContain('frag');
    expect(req.target.match(/uuid=/g)).toHaveLength(1);
    const q = new URLSearchParams(req.target.split('?')[1]);
    expect(q.get('pending')).toBe('1');
    expect(q.has('txid_out')).toBe(false);
    expect(req.requestUrl).toBe(`https://shop.example:8443${req.target}`);
  });

  it('form POST puts the fields only in an urlencoded body', () => {
    const req = buildCallbackRequest(target('https://shop.example/cb?order=42', 1, 0), btcSnapshot, 'confirmed');
    expect(req.method).toBe('POST');
    expect(req.target).toBe('/cb?order=42');
    expect(req.contentType).toBe('application/x-www-form-urlencoded');
    const body = new URLSearchParams(req.body.toString());
    expect(body.get('result')).toBe('sent');
    expect(body.get('vout')).toBe('1');
  });

  it('JSON POST puts typed fields only in a JSON body', () => {
    const req = buildCallbackRequest(target('https://shop.example/cb', 1, 1), btcSnapshot, 'pending');
    expect(req.target).toBe('/cb');
    expect(req.contentType).toBe('application/json');
    const body = JSON.parse(req.body.toString());
    expect(body).toMatchObject({ pending: 1, vout: 1, confirmations: 2, txid_out: null });
  });

  it('post=0 with json=1 stays GET', () => {
    expect(buildCallbackRequest(target('https://shop.example/cb', 0, 1), btcSnapshot, 'pending').method).toBe('GET');
  });

  it('keeps up to 100 safe merchant pairs in order; drops empty pairs and payload field names', () => {
    const many = Array.from({ length: 120 }, (_, i) => `k${i}=${i}`).join('&');
    expect(merchantPairs(`?${many}`)).toHaveLength(100);
    expect(merchantPairs(`?${many}`)[99]).toBe('k99=99');
    expect(merchantPairs('?a=1&&uuid=evil&pending=0&b=%20x&value%5Fcoin=1')).toEqual(['a=1', 'b=%20x']);
  });

  it('canonical bytes are the six components joined by LF with no LF after the body', () => {
    const bytes = canonicalBytes({ timestamp: '1700000000', method: 'post', host: 'Shop.Example', target: '/cb?x=1', body: '{"a":1}' });
    expect(bytes.toString()).toBe('v1\n1700000000\nPOST\nshop.example\n/cb?x=1\n{"a":1}');
    expect(canonicalBytes({ timestamp: '1', method: 'GET', host: 'h', target: '/', body: '' }).toString()).toBe('v1\n1\nGET\nh\n/\n');
    expect(hostnameOf('Shop.Example:8443')).toBe('shop.example');
    expect(hostnameOf('[::1]:80')).toBe('[::1]');
  });
});
