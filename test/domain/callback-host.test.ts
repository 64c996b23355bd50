import { callbackHost } from '../../src/domain/callback-host';

/**
 * SPEC 4.8 and 5: the callback domain a fee tier counts by and the host the signature covers: the
 * lower-cased hostname, no port, no credentials, as the URL parser reads it (percent-encoding decoded,
 * IPv6 in brackets): a hand-written pattern reads those differently.
 */
describe('callbackHost', () => {
  it.each([
    ['https://shop.example/cb', 'shop.example'],
    ['https://SHOP.Example/cb?x=1', 'shop.example'],
    ['https://shop.example:8443/cb', 'shop.example'],
    ['HTTPS://shop.example', 'shop.example'],
    ['https://user:pw@Shop.example:8443/b?x=1', 'shop.example'],
    ['https://shop.example./cb', 'shop.example.'],
    ['https://sh%6Fp.example/cb', 'shop.example'],
    ['https://[2001:DB8::1]:8443/cb', '[2001:db8::1]'],
    ['http://127.0.0.1/cb', '127.0.0.1'],
    ['https://shop.example#frag', 'shop.example'],
  ])('%s → %s', (url, host) => {
    expect(callbackHost(url)).toBe(host);
    expect(callbackHost(new URL(url))).toBe(host);
  });

  it('a string that is not a URL throws', () => {
    expect(() => callbackHost('not a url')).toThrow('Invalid URL');
  });
});
