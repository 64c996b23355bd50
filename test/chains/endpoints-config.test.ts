import { chainConfigFromEnv } from '../../src/chains/config';
import { EndpointPool, endpointOf, parseEndpoints } from '../../src/chains/endpoints';
import { healthBounds } from '../../src/chains/endpoint-health';

/** `{NETWORK}_RPC_URL` as a list, credentials as a header, the health bounds from the environment. */
describe('RPC endpoints from the configuration', () => {
  it('keeps a single URL as it was, and reads a comma-separated list in order', () => {
    expect(chainConfigFromEnv({ ETHEREUM_RPC_URL: 'http://127.0.0.1:8545' }).ethereum.rpcUrl).toBe('http://127.0.0.1:8545');
    expect(parseEndpoints('http://127.0.0.1:8545').map((e) => e.url)).toEqual(['http://127.0.0.1:8545']);
    const eps = parseEndpoints(' https://a.example/v3/key , http://u:p@b.example:8332/wallet/w ,');
    expect(eps.map((e) => [e.label, e.url, e.host])).toEqual([
      ['0', 'https://a.example/v3/key', 'a.example'],
      ['1', 'http://b.example:8332/wallet/w', 'b.example:8332'],
    ]);
  });

  it('turns userinfo into a basic Authorization header and keeps it out of the URL', () => {
    const ep = endpointOf('http://gw%40user:p%3As%2Fs@127.0.0.1:9000');
    expect(ep.url).toBe('http://127.0.0.1:9000');
    expect(ep.headers).toEqual({ authorization: 'Basic ' + Buffer.from('gw@user:p:s/s').toString('base64') });
    expect(endpointOf('http://127.0.0.1:9000').headers).toEqual({});
  });

  it('refuses a malformed endpoint without repeating it (it may hold a password)', () => {
    expect(() => chainConfigFromEnv({ ETHEREUM_RPC_URL: 'http://127.0.0.1:8545,not a url secret-pw' })).toThrow('invalid configuration: RPC endpoint 1 is not a URL');
    try {
      parseEndpoints('::secret-pw@');
    } catch (e) {
      expect((e as Error).message).not.toContain('secret-pw');
    }
    expect.assertions(2);
  });

  it('reads the health bounds and the sponsor floor, and refuses bad ones', () => {
    const c = chainConfigFromEnv({ SOLANA_RPC_URL: 'http://a,http://b', SOLANA_RPC_MAX_LAG: '40', SOLANA_RPC_STALL_SECONDS: '7.5', SOLANA_RPC_PROBE_SECONDS: '1', SOLANA_SPONSOR_MIN_BALANCE: '50000000' });
    expect(c.solana.endpointHealth).toEqual({ maxLag: 40, stallMs: 7500, probeMs: 1000 });
    expect(c.solana.sponsorMinBalance).toBe(50_000_000n);
    expect(healthBounds('solana', c.solana.endpointHealth)).toEqual({ maxLag: 40, stallMs: 7500, probeMs: 1000 });
    expect(healthBounds('ethereum', { maxLag: undefined })).toEqual(healthBounds('ethereum'));
    expect(() => chainConfigFromEnv({ ETHEREUM_RPC_URL: 'http://a', ETHEREUM_RPC_MAX_LAG: '-1' })).toThrow('ETHEREUM_RPC_MAX_LAG');
    expect(() => chainConfigFromEnv({ ETHEREUM_RPC_URL: 'http://a', ETHEREUM_SPONSOR_MIN_BALANCE: '1.5' })).toThrow('ETHEREUM_SPONSOR_MIN_BALANCE');
  });

  it('orders reads: healthy endpoints first in the operator order; with none healthy, the most advanced', () => {
    const pool = new EndpointPool('ethereum', 'http://a,http://b,http://c');
    expect(pool.readOrder().map((e) => e.label)).toEqual(['0', '1', '2']);
    pool.setHealth(pool.endpoints[0], false, 10n);
    expect(pool.readOrder().map((e) => e.label)).toEqual(['1', '2']);
    pool.setHealth(pool.endpoints[1], false, 30n);
    pool.setHealth(pool.endpoints[2], false, 20n);
    expect(pool.readOrder().map((e) => e.label)).toEqual(['1', '2', '0']);
  });
});
