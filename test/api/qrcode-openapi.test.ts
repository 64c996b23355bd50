import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { startApi, type TestApi } from './helpers';
import { depositAddressFor, qrPath } from './qrcode-helpers';

/** GET /api/{ticker}/qrcode: real 200, 404 and 422 bodies validate against the served OpenAPI document. */

let api: TestApi;
let ajv: Ajv2020;
beforeAll(async () => {
  api = await startApi();
  const doc = (await (await api.get('/api/openapi.json')).json()) as object;
  ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
});
afterAll(() => api.close());

const OP = 'openapi.json#/paths/~1api~1{ticker}~1qrcode/get/responses';

async function documented(path: string, status: number): Promise<boolean> {
  const r = await api.json(path);
  expect(r.status).toBe(status);
  const validate = ajv.compile({ $ref: `${OP}/${status}/content/application~1json/schema` });
  if (!validate(r.body)) throw new Error(`${path} ${status}: ${JSON.stringify(validate.errors)}`);
  return true;
}

it('success and every documented error match the document; a broken body does not', async () => {
  const address = await depositAddressFor(api, 'sol_usdt', 'solana');
  expect(await documented(qrPath('sol_usdt', { address, value: '12.5', size: '128' }), 200)).toBe(true);
  expect(await documented(qrPath('sol_usdt', { address: 'x' }), 404)).toBe(true);
  expect(await documented(qrPath('sol_usdt', { address, size: '9' }), 422)).toBe(true);
  expect(await documented(qrPath('nope', { address }), 422)).toBe(true);
  const validate = ajv.compile({ $ref: `${OP}/200/content/application~1json/schema` });
  expect(validate({ status: 'success', payment_uri: 'solana:x', qr_code: 'not base64!' })).toBe(false);
  expect(validate({ status: 'success', payment_uri: 'solana:x', qr_code: Buffer.from('GIF89a').toString('base64') })).toBe(false);
  expect(validate({ status: 'success', payment_uri: 'solana:x' })).toBe(false);
});
