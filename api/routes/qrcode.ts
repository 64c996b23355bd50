import { Router } from 'express';
import { and, eq, exists, or, sql } from 'drizzle-orm';
import QRCode from 'qrcode';
import { z } from 'zod';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { canonicalAddress } from '../../src/chains/addresses';
import { tokenContract, type ChainMode } from '../../src/chains/config';
import type { Db } from '../../src/db/client';
import { configTickers, paymentConfigs } from '../../src/db/schema';
import { tickerFromPath } from '../../src/domain/assets';
import { GatewayError } from '../../src/domain/errors';
import { formatUnits, parseUnits } from '../../src/domain/money';
import { routeAsset } from '../asset-cache';
import type { AssetView } from '../assets';
import type { PublicDeps } from '../deps';
import { TickerParams, errorResponses, fieldErrors, newFieldErrors } from '../schemas';

/**
 * GET /api/{ticker}/qrcode: the wallet-standard payment URI of one of this gateway's deposit addresses, and
 * its QR code. BIP 21 for the UTXO coins, EIP-681 for Ethereum and ERC-20, Solana Pay for SOL and SPL.
 */

export const QR_SIZE = { min: 64, max: 1024, default: 256 } as const;
const ADDRESS_MAX = 500;

const single = (iss: { input: unknown }) => (iss.input === undefined ? 'Required.' : 'Must be a single string value.');

export const QrcodeQuery = z.strictObject({
  address: z
    .string({ error: single })
    .min(1, { error: 'Required.' })
    .max(ADDRESS_MAX, { error: `Must be at most ${ADDRESS_MAX} characters.` })
    .meta({ description: 'A deposit address (address_in) of this gateway for the ticker', example: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' }),
  value: z
    .string({ error: single })
    .regex(/^\d{1,40}(\.\d{1,40})?$/, { error: 'Must be a positive decimal number in whole coins, e.g. 0.05.' })
    .optional()
    .meta({ description: 'Amount to request, in whole coins, at most the asset\'s decimals; omitted: the wallet asks', example: '0.05' }),
  size: z
    .string({ error: single })
    .regex(/^\d{1,5}$/, { error: `Must be an integer from ${QR_SIZE.min} to ${QR_SIZE.max}.` })
    .refine((s) => Number(s) >= QR_SIZE.min && Number(s) <= QR_SIZE.max, { error: `Must be an integer from ${QR_SIZE.min} to ${QR_SIZE.max}.` })
    .optional()
    .meta({ description: `Image width and height in pixels, ${QR_SIZE.min} to ${QR_SIZE.max}, default ${QR_SIZE.default}` }),
});

export const QrcodeResponse = z
  .strictObject({
    status: z.literal('success'),
    payment_uri: z.string().meta({
      description: 'BIP 21 (bitcoin:, litecoin:, bitcoincash:, dogecoin:, zcash:), EIP-681 (ethereum:) or Solana Pay (solana:) URI',
      example: 'bitcoin:bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu?amount=0.05',
    }),
    qr_code: z
      .string()
      // Standard base64 that opens with the PNG signature (89 50 4E 47 0D 0A 1A 0A).
      .regex(/^iVBORw0KGgo[A-Za-z0-9+/]*={0,2}$/)
      .meta({ description: 'PNG image of the QR code of payment_uri, standard base64', contentEncoding: 'base64', contentMediaType: 'image/png' }),
  })
  .meta({ id: 'PaymentQrCode' });

/** BIP 21 schemes; Bitcoin Cash addresses carry their CashAddr prefix, which is the scheme. */
const BIP21_SCHEME: Record<string, string> = { btc: 'bitcoin', ltc: 'litecoin', bch: 'bitcoincash', doge: 'dogecoin', zec: 'zcash' };

/**
 * EIP-155 chain of each mode. The API never asks the node: mainnet is 1, the public testnet Sepolia,
 * regtest the local anvil devnet the project runs (devnet/anvil.ts).
 */
export const EVM_CHAIN_ID: Record<ChainMode, bigint> = { mainnet: 1n, testnet: 11155111n, regtest: 31337n };

/** Whole-coin decimal text without trailing zeros: "0.05000000" → "0.05", "2.00" → "2". */
function plainDecimal(base: bigint, decimals: number): string {
  const text = formatUnits(base, decimals);
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** The payment URI of `address` (stored spelling) for `amount` base units, or no amount. */
export function paymentUri(v: AssetView, address: string, amount: bigint | undefined): string {
  const { asset, network } = v;
  const mode = v.runtime!.mode;
  if (network.family === 'utxo') {
    const head = address.includes(':') ? address : `${BIP21_SCHEME[asset.ticker]}:${address}`;
    return amount === undefined ? head : `${head}?amount=${plainDecimal(amount, asset.decimals)}`;
  }
  if (network.family === 'evm') {
    const chain = EVM_CHAIN_ID[mode];
    if (asset.type === 'native') return `ethereum:${address}@${chain}${amount === undefined ? '' : `?value=${amount}`}`;
    const token = tokenContract(asset, v.runtime!)!;
    return `ethereum:${token}@${chain}/transfer?address=${address}${amount === undefined ? '' : `&uint256=${amount}`}`;
  }
  const params = new URLSearchParams();
  if (amount !== undefined) params.set('amount', plainDecimal(amount, asset.decimals));
  if (asset.type === 'token') params.set('spl-token', tokenContract(asset, v.runtime!)!);
  const query = params.toString();
  return `solana:${address}${query ? `?${query}` : ''}`;
}

/** The stored address_in when `address` is a deposit address of a configuration that takes this ticker. */
async function depositAddress(db: Db, v: AssetView, address: string): Promise<string | undefined> {
  let canonical: string;
  try {
    canonical = canonicalAddress(v.network.id, v.runtime!.mode, address);
  } catch {
    return undefined;
  }
  const takesTicker = db
    .select({ one: sql`1` })
    .from(configTickers)
    .where(and(eq(configTickers.configId, paymentConfigs.id), eq(configTickers.ticker, v.asset.ticker)));
  const [row] = await db
    .select({ addressIn: paymentConfigs.addressIn })
    .from(paymentConfigs)
    .where(
      and(
        eq(paymentConfigs.family, v.network.addressFamily),
        eq(paymentConfigs.addressIn, canonical),
        or(eq(paymentConfigs.ticker, v.asset.ticker), exists(takesTicker)),
      ),
    )
    .limit(1);
  return row?.addressIn;
}

/** No asset has this many whole coins: a request above it is a mistake or a probe, whatever the chain could encode. */
const WHOLE_COINS_MAX = 10n ** 15n;
/** The amount types of the chains: UTXO outputs are int64, Solana's lamports and token amounts u64, EVM's uint256. */
const FAMILY_AMOUNT_MAX: Record<string, bigint> = { utxo: 2n ** 63n - 1n, sol: 2n ** 64n - 1n, evm: 2n ** 256n - 1n };

/** The largest amount a payment URI of the asset may ask for, in base units. */
export function maxRequestAmount(v: AssetView): bigint {
  const coins = WHOLE_COINS_MAX * 10n ** BigInt(v.asset.decimals);
  const chain = FAMILY_AMOUNT_MAX[v.network.family];
  return coins < chain ? coins : chain;
}

/** Query → amount in base units and image size; every failing field in one 1001. */
function parseQuery(v: AssetView, raw: unknown): { address: string; amount: bigint | undefined; size: number } {
  const parsed = QrcodeQuery.safeParse(raw);
  const errors = parsed.success ? newFieldErrors() : fieldErrors(parsed.error);
  // The precision rule needs the asset; it is checked even when another field failed, so one 1001 lists all.
  const rawValue = (raw as Record<string, unknown>).value;
  const value = parsed.success ? parsed.data.value : typeof rawValue === 'string' && !errors.value ? rawValue : undefined;
  let amount: bigint | undefined;
  if (value !== undefined) {
    try {
      amount = parseUnits(value, v.asset.decimals);
      if (amount === 0n) errors.value = ['Must be greater than zero.'];
      else if (amount > maxRequestAmount(v)) errors.value = [`Must be at most ${plainDecimal(maxRequestAmount(v), v.asset.decimals)} ${v.asset.ticker}.`];
    } catch {
      errors.value = [`Must have at most ${v.asset.decimals} decimal places for ${v.asset.ticker}.`];
    }
  }
  if (!parsed.success || Object.keys(errors).length > 0) throw new GatewayError(1001, undefined, errors);
  return { address: parsed.data.address, amount, size: parsed.data.size === undefined ? QR_SIZE.default : Number(parsed.data.size) };
}

export function qrcodeRoutes(deps: PublicDeps, r: Router = Router()): Router {
  r.get('/api/:ticker/qrcode', async (req, res) => {
    const v = await routeAsset(deps, tickerFromPath(req.params.ticker), { servedOnly: true });
    const q = parseQuery(v, { ...(req.query as object) });
    const address = await depositAddress(deps.db, v, q.address);
    if (!address) throw new GatewayError(1201, `The address is not a deposit address of this gateway for ${v.asset.ticker}. Use an address_in from create.`);
    const uri = paymentUri(v, address, q.amount);
    // Error correction M and the standard 4-module quiet zone: what phone wallets scan reliably.
    const png = await QRCode.toBuffer(uri, { type: 'png', errorCorrectionLevel: 'M', margin: 4, width: q.size });
    const body: z.infer<typeof QrcodeResponse> = { status: 'success', payment_uri: uri, qr_code: png.toString('base64') };
    res.json(body);
  });
  return r;
}

export function registerQrcodeOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/{ticker}/qrcode',
    summary: 'Payment URI and QR code of a deposit address',
    description:
      'The wallet-standard URI of one of this gateway\'s deposit addresses for the ticker (BIP 21, EIP-681, Solana Pay), ' +
      'with an optional exact amount, and its QR code as a base64 PNG. An address that is not a deposit address for the ticker is 1201.',
    request: { params: TickerParams, query: QrcodeQuery },
    responses: {
      200: { description: 'Payment URI and QR code', content: { 'application/json': { schema: QrcodeResponse } } },
      ...errorResponses([1001, 1101, 1102, 1201]),
    },
  });
}
