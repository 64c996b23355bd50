import net from 'node:net';
import zlib from 'node:zlib';
import { repeatedJsonName } from '../../api/body';
import { callCreate, merchantAddress, startApi, TRANSPORTS, type TestApi } from './helpers';
import { depositAddressFor, qrPath } from './qrcode-helpers';

/**
 * Issue 56 item 5: a hostile body costs the gateway nothing. Raw sockets, so that what the client announces
 * and what it sends can differ: the answer must come, and the connection close, long before the announced
 * body could have been sent.
 */

let api: TestApi;
let port: number;
beforeAll(async () => {
  api = await startApi();
  port = Number(new URL(api.base).port);
});
afterAll(() => api.close());

const OUT = merchantAddress('bitcoin');
let n = 0;
const params = () => ({ callback_url: `https://shop.example/hostile?order=${++n}`, address_out: OUT });

interface Exchange {
  status: number;
  headers: string;
  body: Record<string, unknown> & { errors?: Record<string, string[]> };
  /** Body bytes the client had written when the server closed the connection. */
  sent: number;
  closed: boolean;
}

/**
 * Sends `head` and then `chunk` again and again (at most `max` bytes), until the server closes the
 * connection or `ms` pass; returns the response and how much was sent.
 */
function exchange(head: string | Buffer, chunk: Buffer | undefined, max: number, ms = 5_000): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let sent = 0;
    let closed = false;
    let pump: NodeJS.Timeout | undefined;
    const finish = () => {
      clearInterval(pump);
      clearTimeout(timer);
      const text = Buffer.concat(received).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no response (closed: ${closed}, sent ${sent})`));
      const headers = text.slice(0, split);
      resolve({ status: Number(headers.split(' ')[1]), headers, body: JSON.parse(text.slice(split + 4)) as Exchange['body'], sent, closed });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      finish();
    }, ms);
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', () => undefined); // a reset after the answer is fine: the answer was read
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('connect', () => {
      socket.write(head);
      if (!chunk) return;
      pump = setInterval(() => {
        if (closed || socket.destroyed || sent + chunk.length > max) return clearInterval(pump);
        socket.write(chunk);
        sent += chunk.length;
      }, 2);
    });
  });
}

const tooLarge = { status: 'error', code: 1001, error: 'VALIDATION_FAILED', message: expect.any(String), errors: { body: ['Request body exceeds the size limit.'] } };

describe('a body over the limit', () => {
  it('a declared Content-Length of 1 GB → 422 1001 at once, and the connection closed', async () => {
    const head = `POST /api/btc/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n`;
    const started = Date.now();
    const r = await exchange(head, Buffer.alloc(1024, 0x20), 1_000_000_000);
    expect(r.status).toBe(422);
    expect(r.body).toEqual(tooLarge);
    expect(r.headers).toMatch(/\r\nConnection: close/i);
    expect(r.closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(r.sent).toBeLessThan(1_000_000);
  });

  it.each([
    ['an unsupported content type', 'text/plain', 'Unsupported content type.'],
    ['a form', 'application/x-www-form-urlencoded', 'Request body exceeds the size limit.'],
  ])('%s with a declared 1 GB → refused at once, the connection closed', async (_name, type, message) => {
    const head = `POST /api/btc/create HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: 1000000000\r\n\r\n`;
    const r = await exchange(head, Buffer.alloc(1024, 0x61), 1_000_000_000);
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual({ body: [message] });
    expect(r.closed).toBe(true);
    expect(r.sent).toBeLessThan(1_000_000);
  });

  it('a chunked body without end → cut at the limit: 422 1001, the connection closed', async () => {
    const head = `POST /api/btc/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunk = Buffer.from(`400\r\n${' '.repeat(1024)}\r\n`);
    const r = await exchange(head, chunk, 100_000_000);
    expect(r.status).toBe(422);
    expect(r.body).toEqual(tooLarge);
    expect(r.closed).toBe(true);
    expect(r.sent).toBeLessThan(2_000_000);
  });

  it('a small gzip body that inflates past the limit → 422 1001', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(10_000_000, 0x20));
    expect(bomb.length).toBeLessThan(16 * 1024);
    const head = `POST /api/btc/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${bomb.length}\r\n\r\n`;
    const r = await exchange(Buffer.concat([Buffer.from(head), bomb]), undefined, 0);
    expect(r.status).toBe(422);
    expect(r.body).toEqual(tooLarge);
  });

  it('a route that reads no body, with a declared 1 GB → answered, the connection closed without reading it', async () => {
    const head = `GET /api/btc/info HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n`;
    const r = await exchange(head, Buffer.alloc(1024, 0x61), 1_000_000_000);
    expect(r.status).toBe(200);
    expect(r.closed).toBe(true);
    expect(r.sent).toBeLessThan(1_000_000);
  });

  it('an ordinary POST create keeps its connection open for the next request', async () => {
    const body = JSON.stringify(params());
    const one = `POST /api/btc/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const r = await exchange(one, undefined, 0, 1_500);
    expect(r.status).toBe(200);
    expect(r.closed).toBe(false);
  });
});

describe('requests Node\'s HTTP parser refuses → the spec\'s error body', () => {
  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n'],
    ['a header without a colon', 'GET /api HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n'],
    ['a header name with a space', 'GET /api HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n'],
    ['both Content-Length and chunked', 'POST /api/btc/create HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['an invalid chunk size', 'POST /api/btc/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
    ['headers over the size limit', `GET /api HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`],
  ])('%s → 422 1001 in JSON, the connection closed', async (_name, request) => {
    const r = await exchange(request, undefined, 0);
    expect(r.status).toBe(422);
    expect(r.headers).toMatch(/\r\nContent-Type: application\/json/i);
    expect(r.body).toMatchObject({ status: 'error', code: 1001, error: 'VALIDATION_FAILED', message: expect.any(String), errors: expect.any(Object) });
    expect(r.closed).toBe(true);
  });
});

describe('the three create transports agree on every field rule', () => {
  it.each(TRANSPORTS)('an empty-named pair by %s → 1001', async (transport) => {
    const r = await callCreate(api, '/api/btc/create', transport, { '': '0', ...params() });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 1001, errors: { '': ['Unknown parameter.'] } });
  });

  it.each([
    ['GET query', 'query'],
    ['POST form', 'body'],
  ] as const)('more than 50 parameters by %s → 1001', async (transport, field) => {
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}`, '1']));
    const r = await callCreate(api, '/api/btc/create', transport, { ...params(), ...many });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 1001, errors: { [field]: ['Too many parameters.'] } });
  });

  it.each(TRANSPORTS)('a parameter given twice by %s → 1001 naming it', async (transport) => {
    const text = `${new URLSearchParams(params())}&pending=0&pending=1`;
    const json = `${JSON.stringify(params()).slice(0, -1)},"pending":0, "pend\\u0069ng" :1}`;
    const r =
      transport === 'GET query'
        ? await api.json(`/api/btc/create?${text}`)
        : transport === 'POST form'
          ? await api.json('/api/btc/create', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: text })
          : await api.json('/api/btc/create', { method: 'POST', headers: { 'content-type': 'application/json' }, body: json });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors!)).toEqual(['pending']);
  });

  it('a JSON name repeated only inside a value is no repeated parameter', () => {
    expect(repeatedJsonName('{"a":{"b":1,"b":2},"c":["a","a"],"d":"\\"a\\":1, \\"a\\":2"}')).toBeUndefined();
    expect(repeatedJsonName('{"a":1,"b":{"a":2},"a":3}')).toBe('a');
  });
});

describe('every numeric input is bounded', () => {
  let eth: string;
  let sol: string;
  let btc: string;
  beforeAll(async () => {
    eth = await depositAddressFor(api, 'eth', 'ethereum', 'https://shop.example/qr-bound/eth');
    sol = await depositAddressFor(api, 'sol', 'solana', 'https://shop.example/qr-bound/sol');
    btc = await depositAddressFor(api, 'btc', 'bitcoin', 'https://shop.example/qr-bound/btc');
  });

  it.each([
    ['eth: 10^22 ETH (10^40 wei)', 'eth', () => eth, '10000000000000000000000'],
    ['eth: 40 digits of whole coins', 'eth', () => eth, '9'.repeat(40)],
    ['sol: more lamports than a u64 holds', 'sol', () => sol, '100000000000'],
    ['btc: more satoshis than an int64 holds', 'btc', () => btc, '100000000000'],
  ])('QR value %s → 1001 errors.value', async (_name, ticker, address, value) => {
    const r = await api.json(qrPath(ticker, { address: address(), value }));
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 1001, errors: { value: [expect.stringMatching(/^Must be at most/)] } });
  });

  it('a large but possible QR value is still accepted', async () => {
    const r = await api.json(qrPath('eth', { address: eth, value: '1000000' }));
    expect(r.status).toBe(200);
  });

  it.each(TRANSPORTS)('create confirmations of 10^40 by %s → 1001', async (transport) => {
    const r = await callCreate(api, '/api/btc/create', transport, { ...params(), confirmations: transport === 'POST JSON' ? 1e40 : '1'.padEnd(41, '0') });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors!)).toEqual(['confirmations']);
  });
});
