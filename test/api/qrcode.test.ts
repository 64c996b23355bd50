import bip21 from 'bip21';
import { parse as parseEip681 } from 'eth-url-parser';
import { encodeURL, parseURL } from '@solana/pay';
import { ASSETS } from '../../src/domain/assets';
import { startApi, type TestApi } from './helpers';
import { depositAddressFor, qrPath, readQr, type QrBody } from './qrcode-helpers';

/**
 * GET /api/{ticker}/qrcode, happy paths per family: the URI each wallet standard defines, checked with a
 * maintained parser of that standard and against the standard's own examples; the PNG decoded back.
 */

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const qr = async (ticker: string, query: Record<string, string>) => {
  const r = await api.json(qrPath(ticker, query));
  expect([r.status, r.body.status]).toEqual([200, 'success']);
  return r.body as unknown as QrBody;
};

describe('BIP 21 (btc, ltc, bch, doge, zec)', () => {
  const coins = [
    ['btc', 'bitcoin', 'bitcoin'],
    ['ltc', 'litecoin', 'litecoin'],
    ['bch', 'bitcoincash', 'bitcoincash'],
    ['doge', 'dogecoin', 'dogecoin'],
    ['zec', 'zcash', 'zcash'],
  ] as const;

  it.each(coins)('%s: scheme, address and the exact amount; bip21 decodes it; the QR holds the URI', async (ticker, network, scheme) => {
    const address = await depositAddressFor(api, ticker, network);
    const bare = address.startsWith(`${scheme}:`) ? address.slice(scheme.length + 1) : address;
    const body = await qr(ticker, { address, value: '0.00012300' });
    expect(body.payment_uri).toBe(`${scheme}:${bare}?amount=0.000123`);
    expect(bip21.decode(body.payment_uri, scheme)).toEqual({ address: bare, options: { amount: 0.000123 } });
    const image = readQr(body.qr_code);
    expect(image.text).toBe(body.payment_uri);
    expect([image.width, image.height]).toEqual([256, 256]);
    // No value: the plain address URI, which the wallet completes.
    expect((await qr(ticker, { address })).payment_uri).toBe(`${scheme}:${bare}`);
  });

  it('matches the shape of BIP 21\'s own examples and bip21.encode for the same address and amount', async () => {
    // BIP 21: "bitcoin:1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH?amount=50" and "…?amount=20.3&label=Luke-Jr".
    expect(bip21.decode('bitcoin:1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH?amount=20.3&label=Luke-Jr')).toEqual({
      address: '1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH', options: { amount: 20.3, label: 'Luke-Jr' },
    });
    const address = await depositAddressFor(api, 'btc', 'bitcoin');
    expect((await qr('btc', { address, value: '50' })).payment_uri).toBe(bip21.encode(address, { amount: 50 }));
    expect((await qr('btc', { address, value: '20.3' })).payment_uri).toBe(bip21.encode(address, { amount: 20.3 }));
  });

  it('amounts stay exact at the full precision, with no float on the way', async () => {
    const address = await depositAddressFor(api, 'btc', 'bitcoin');
    expect((await qr('btc', { address, value: '20999999.99999999' })).payment_uri).toBe(`bitcoin:${address}?amount=20999999.99999999`);
    expect((await qr('btc', { address, value: '0.00000001' })).payment_uri).toBe(`bitcoin:${address}?amount=0.00000001`);
    expect((await qr('btc', { address, value: '007.10' })).payment_uri).toBe(`bitcoin:${address}?amount=7.1`);
  });
});

describe('EIP-681 (eth, ERC-20)', () => {
  let address: string;
  beforeAll(async () => {
    address = await depositAddressFor(api, 'eth', 'ethereum');
  });

  it('eth: ethereum:<address>@1?value=<wei>; eth-url-parser reads it back', async () => {
    const body = await qr('eth', { address, value: '1.5' });
    expect(body.payment_uri).toBe(`ethereum:${address}@1?value=1500000000000000000`);
    expect(parseEip681(body.payment_uri)).toEqual({
      scheme: 'ethereum', target_address: address, chain_id: '1', parameters: { value: '1500000000000000000' },
    });
    expect(readQr(body.qr_code).text).toBe(body.payment_uri);
    const wei = await qr('eth', { address, value: '0.000000000000000001' });
    expect(wei.payment_uri).toBe(`ethereum:${address}@1?value=1`);
  });

  it('ERC-20: ethereum:<token>@1/transfer?address=<deposit>&uint256=<base units>, as in the EIP\'s own example', async () => {
    // The configuration of eth is reused for the token (SPEC 4.6 rule 1): the same address takes both.
    await depositAddressFor(api, 'erc20_usdt', 'ethereum', 'https://shop.example/qr/eth');
    const body = await qr('erc20_usdt', { address, value: '25.5', size: '300' });
    const token = ASSETS.erc20_usdt.contract!;
    expect(body.payment_uri).toBe(`ethereum:${token}@1/transfer?address=${address}&uint256=25500000`);
    const example = parseEip681('ethereum:0x89205a3a3b2a69de6dbf7f01ed13b2108b2c43e7/transfer?address=0x8e23ee67d1332ad560396262c48ffbb01f93d052&uint256=1');
    const ours = parseEip681(body.payment_uri);
    expect(Object.keys(ours).sort()).toEqual([...Object.keys(example), 'chain_id'].sort());
    expect(ours).toEqual({
      scheme: 'ethereum', target_address: token, chain_id: '1', function_name: 'transfer', parameters: { address, uint256: '25500000' },
    });
    const image = readQr(body.qr_code);
    expect(image.text).toBe(body.payment_uri);
    expect(image.width).toBe(300);
    expect((await qr('erc20_usdt', { address })).payment_uri).toBe(`ethereum:${token}@1/transfer?address=${address}`);
  });

  it('a lower-case spelling of the deposit address is found; the URI carries the stored EIP-55 form', async () => {
    expect((await qr('eth', { address: address.toLowerCase() })).payment_uri).toBe(`ethereum:${address}@1`);
  });
});

describe('Solana Pay (sol, SPL)', () => {
  it('sol: solana:<address>?amount=<decimal>; @solana/pay parses and re-encodes it identically', async () => {
    const address = await depositAddressFor(api, 'sol', 'solana');
    const body = await qr('sol', { address, value: '0.000000001' });
    expect(body.payment_uri).toBe(`solana:${address}?amount=0.000000001`);
    const parsed = parseURL(body.payment_uri) as ReturnType<typeof parseURL> & { recipient: { toBase58(): string }; amount: { toFixed(): string } };
    expect(parsed.recipient.toBase58()).toBe(address);
    expect(parsed.amount.toFixed()).toBe('0.000000001');
    expect(encodeURL(parsed as Parameters<typeof encodeURL>[0]).toString()).toBe(body.payment_uri);
    expect(readQr(body.qr_code).text).toBe(body.payment_uri);
  });

  it('SPL: amount and spl-token, in the order of the spec\'s own example', async () => {
    // Solana Pay: "solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?amount=0.01&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
    const example = parseURL('solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?amount=0.01&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
    expect(encodeURL(example as Parameters<typeof encodeURL>[0]).toString()).toBe(
      'solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?amount=0.01&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    );
    const address = await depositAddressFor(api, 'sol_usdc', 'solana', 'https://shop.example/qr/sol');
    const mint = ASSETS.sol_usdc.contract!;
    const body = await qr('sol_usdc', { address, value: '0.01' });
    expect(body.payment_uri).toBe(`solana:${address}?amount=0.01&spl-token=${mint}`);
    const parsed = parseURL(body.payment_uri) as ReturnType<typeof parseURL> & { splToken: { toBase58(): string } };
    expect(parsed.splToken.toBase58()).toBe(mint);
    expect(encodeURL(parsed as Parameters<typeof encodeURL>[0]).toString()).toBe(body.payment_uri);
    expect((await qr('sol_usdc', { address })).payment_uri).toBe(`solana:${address}?spl-token=${mint}`);
  });
});
