import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { callCreate, merchantAddress, type TestApi } from './helpers';

export interface QrBody {
  status: string;
  payment_uri: string;
  qr_code: string;
}

/** Creates a configuration for the ticker and returns its address_in. */
export async function depositAddressFor(api: TestApi, ticker: string, network: string, callback = `https://shop.example/qr/${ticker}`): Promise<string> {
  const r = await callCreate(api, `/api/${ticker}/create`, 'POST JSON', { callback_url: callback, address_out: merchantAddress(network) });
  if (r.status !== 200) throw new Error(`create ${ticker}: ${JSON.stringify(r.body)}`);
  return String(r.body.address_in);
}

export function qrPath(ticker: string, query: Record<string, string>): string {
  return `/api/${ticker}/qrcode?${new URLSearchParams(query)}`;
}

/** The PNG decoded back: its size and the text of the QR code in it (jsQR over pngjs pixels). */
export function readQr(base64: string): { width: number; height: number; text: string | undefined } {
  const png = PNG.sync.read(Buffer.from(base64, 'base64'));
  const code = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
  return { width: png.width, height: png.height, text: code?.data };
}
