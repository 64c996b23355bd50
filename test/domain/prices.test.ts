import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FixedPriceSource, HttpPriceSource } from '../../src/prices/source';

describe('price sources', () => {
  it('fixed source: known symbols, undefined otherwise', async () => {
    const s = new FixedPriceSource({ ETH: '3000.00', BAD: '0' });
    expect(await s.usdt('eth')).toBe('3000.00');
    expect(await s.usdt('BAD')).toBeUndefined();
    expect(await s.usdt('XYZ')).toBeUndefined();
  });

  it('HTTP source against a real local server: valid, invalid, failing, slow', async () => {
    const server = http.createServer((req, res) => {
      const sym = req.url!.split('/').pop();
      if (sym === 'ETH') return res.end(JSON.stringify({ price: '3012.50' }));
      if (sym === 'NUM') return res.end(JSON.stringify({ price: 12.5 }));
      if (sym === 'ZERO') return res.end(JSON.stringify({ price: '0' }));
      if (sym === 'NEG') return res.end(JSON.stringify({ price: '-1' }));
      if (sym === 'SLOW') return void setTimeout(() => res.end('{"price":"1"}'), 4_000);
      res.statusCode = 503;
      res.end('down');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const s = new HttpPriceSource(`http://127.0.0.1:${port}/quote/{symbol}`, 1_500);
    try {
      expect(await s.usdt('eth')).toBe('3012.50');
      expect(await s.usdt('num')).toBe('12.5');
      expect(await s.usdt('zero')).toBeUndefined();
      expect(await s.usdt('neg')).toBeUndefined();
      expect(await s.usdt('down')).toBeUndefined();
      expect(await s.usdt('slow')).toBeUndefined();
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
