import { Wallet } from 'ethers';
import { devnetAddress, devnetMine, devnetPay } from '../../devnet/drive';
import { jsonRpc } from '../../src/chains/json-rpc';
import { verifyCallback } from '../../src/callbacks/verify';
import { ASSETS } from '../../src/domain/assets';
import { showsFinalityOnly } from '../../src/domain/finality';
import { formatUnits, parseUnits } from '../../src/domain/money';
import { waitFor } from '../helpers/process';
import { balanceOf, callbacksFor, createConfig, logsOf, startGateway, waitForCallback, type Gateway } from './harness';

/**
 * SPEC 1, 3 and 6 end to end on the local nodes, real PostgreSQL and the real Temporal dev server:
 * create (pending=1, JSON callback) → pay → pending callback → finality → forward → confirmed callback.
 * The UTXO coins run on their local nodes: litecoind, the Bitcoin node (Knots or btcd) and bchd.
 * The payment workflows' fallback reading is an hour away, as in production it is minutes: every step
 * here is driven by the watcher's signals (due, recheck, forward), and a signal that did not come would
 * fail the test instead of being covered by a reading a second later.
 */
let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway({ devnets: { bitcoin: true, bitcoincash: true }, depositPollInterval: '1 hour' });
}, 240_000);
afterAll(async () => {
  await gw?.stop();
}, 60_000);

const payoutAddress = (ticker: string): Promise<string> => devnetAddress(gw.devnets.state, ticker);
const isUtxo = (ticker: string) => ['litecoin', 'bitcoin', 'bitcoincash'].includes(ASSETS[ticker].network);

/** Blocks on chains that do not advance by themselves (the UTXO regtest nodes here). */
async function mine(ticker: string, blocks: number) {
  if (isUtxo(ticker) && blocks > 0) await devnetMine(gw.devnets.state, ticker, blocks);
}

const ZERO = (ticker: string) => formatUnits(0n, ASSETS[ticker].decimals);

describe.each([
  ['eth', '0.5', 3],
  ['erc20_usdt', '125.5', 3],
  ['sol', '1.25', undefined],
  ['sol_usdc', '40', undefined],
  ['ltc', '1.5', 2],
  // Small enough that the callback domain's rolling volume (at the devnet's fixed prices) stays in the
  // first fee tier for every payment of this file: fee '1.00' throughout.
  ['btc', '0.02', 2],
  ['bch', '2.5', 3],
])('%s: deposit → pending → finality → forward → confirmed', (ticker, amount, confirmations) => {
  it('delivers both stages with one UUID and forwards exactly value_forwarded_coin', async () => {
    const a = ASSETS[ticker];
    const addressOut = await payoutAddress(ticker);
    const callback = `${gw.merchantUrl}/shop/callback?order=${ticker}-1`;
    const config = await createConfig(gw, ticker, {
      callback_url: callback, address_out: addressOut, pending: 1, post: 1, json: 1, ...(confirmations ? { confirmations } : {}),
    });
    const before = await balanceOf(gw, ticker, addressOut);
    const txid = await devnetPay(gw.devnets.state, ticker, config.address_in, amount);
    await mine(ticker, 1);

    const pending = await waitForCallback(gw, (f) => f.txid_in === txid && f.result === 'pending', 90_000, `${ticker} pending callback`);
    const p = pending.fields!;
    expect(p).toMatchObject({
      pending: 1, coin: ticker, address_in: config.address_in, address_out: addressOut,
      value_coin: formatUnits(parseUnits(amount, a.decimals), a.decimals), value_forwarded_coin: ZERO(ticker),
      fee: '0.00', fee_coin: ZERO(ticker), txid_out: null,
    });
    expect(p.value).toBe(p.value_coin);
    expect(p).not.toHaveProperty('price');
    if (showsFinalityOnly(a.network)) expect(p.confirmations).toBe(0);
    if (isUtxo(ticker)) expect(typeof p.vout).toBe('number');
    else expect(p).not.toHaveProperty('vout');

    await mine(ticker, confirmations ?? 0);
    // The forward needs a block of its own on a chain that only mines on request.
    const miner = setInterval(() => void mine(ticker, 1).catch(() => undefined), 1000);
    let confirmed;
    try {
      confirmed = await waitForCallback(gw, (f) => f.uuid === p.uuid && f.result === 'sent', 120_000, `${ticker} confirmed callback`);
    } finally {
      clearInterval(miner);
    }
    const c = confirmed.fields!;
    expect(verifyCallback({ method: confirmed.method, url: confirmed.url, headers: confirmed.headers, rawBody: confirmed.rawBody }, gw.publicKey).ok).toBe(true);
    expect(c).toMatchObject({ pending: 0, result: 'sent', coin: ticker, txid_in: txid, value_coin: p.value_coin, fee: '1.00' });
    expect(typeof c.txid_out).toBe('string');
    if (showsFinalityOnly(a.network)) expect(c.confirmations).toBe(1);
    else expect(c.confirmations as number).toBeGreaterThanOrEqual(confirmations!);
    const value = parseUnits(String(c.value_coin), a.decimals);
    const forwarded = parseUnits(String(c.value_forwarded_coin), a.decimals);
    const fee = parseUnits(String(c.fee_coin), a.decimals);
    expect(forwarded + fee).toBe(value);
    expect(forwarded).toBeGreaterThan(0n);
    expect(c.price).toMatch(/^\d+\.\d+$/);
    await waitFor(async () => (await balanceOf(gw, ticker, addressOut)) - before === forwarded, 30_000, `${ticker} merchant balance`);

    await waitFor(async () => (await logsOf(gw, ticker, callback)).body.callbacks?.[0]?.result === 'done', 30_000, `${ticker} logs done`);
    const logs = (await logsOf(gw, ticker, callback)).body;
    expect(logs.callbacks).toHaveLength(1);
    expect(logs.callbacks[0]).toMatchObject({ uuid: p.uuid, txid_out: c.txid_out, value_forwarded_coin: c.value_forwarded_coin, fee_coin: c.fee_coin });
    expect(logs.callbacks[0].logs.length).toBeGreaterThanOrEqual(2);
    expect(callbacksFor(gw, String(p.uuid)).filter((r) => r.fields!.result === 'sent')).toHaveLength(1);
    expect(gw.merchant.fulfilled.has(String(p.uuid))).toBe(true);
  }, 300_000);
});

describe('independent payments and eligibility', () => {
  it('two deposits to one address give two UUIDs and two confirmed callbacks', async () => {
    const addressOut = Wallet.createRandom().address;
    const callback = `${gw.merchantUrl}/twice?order=2`;
    const config = await createConfig(gw, 'eth', { callback_url: callback, address_out: addressOut, post: 1, json: 1, confirmations: 2 });
    const t1 = await devnetPay(gw.devnets.state, 'eth', config.address_in, '0.1');
    const t2 = await devnetPay(gw.devnets.state, 'eth', config.address_in, '0.2');
    const c1 = await waitForCallback(gw, (f) => f.txid_in === t1 && f.result === 'sent', 120_000, 'first confirmed');
    const c2 = await waitForCallback(gw, (f) => f.txid_in === t2 && f.result === 'sent', 120_000, 'second confirmed');
    expect(c1.fields!.uuid).not.toBe(c2.fields!.uuid);
    expect([c1.fields!.value_coin, c2.fields!.value_coin]).toEqual(['0.100000000000000000', '0.200000000000000000']);
    // pending=0 at creation: no pending callback for either
    expect(gw.merchant.received.filter((r) => r.fields?.txid_in === t1 && r.fields?.result === 'pending')).toHaveLength(0);
  }, 300_000);

  it('a deposit below the minimum gives no callback and is recorded failed with its reason', async () => {
    const callback = `${gw.merchantUrl}/small?order=3`;
    const config = await createConfig(gw, 'eth', { callback_url: callback, address_out: Wallet.createRandom().address, pending: 1, post: 1, json: 1 });
    const txid = await devnetPay(gw.devnets.state, 'eth', config.address_in, '0.0005');
    await waitFor(async () => (await logsOf(gw, 'eth', callback)).body.callbacks?.[0]?.result === 'failed', 60_000, 'failed record');
    const rec = (await logsOf(gw, 'eth', callback)).body.callbacks[0];
    expect(rec).toMatchObject({ txid_in: txid, result: 'failed', value_coin: '0.000500000000000000', txid_out: null });
    // Mined, so at least one confirmation as the watcher saw it (SPEC 2.4), although no confirmation check ever ran.
    expect(rec.confirmations as number).toBeGreaterThanOrEqual(1);
    expect(rec.logs).toEqual([]);
    expect(gw.merchant.received.filter((r) => r.fields?.txid_in === txid)).toHaveLength(0);
  }, 120_000);

  it('a configuration reused for a token of the same family takes that token\'s deposits, held to its minimum', async () => {
    const callback = `${gw.merchantUrl}/mixed?order=m1`;
    const addressOut = Wallet.createRandom().address;
    const config = await createConfig(gw, 'eth', { callback_url: callback, address_out: addressOut, post: 1, json: 1, confirmations: 2 });
    // SPEC 4.6 rule 1: the same callback in the same family is the same configuration and address.
    const reused = await createConfig(gw, 'erc20_usdt', { callback_url: callback, address_out: addressOut });
    expect(reused.address_in).toBe(config.address_in);
    // The token's own current minimum (it follows the gas price): at least its floor, in token units.
    expect(parseUnits(reused.minimum_transaction_coin, 6)).toBeGreaterThanOrEqual(parseUnits('5', 6));
    // 100 token units: far below the ETH snapshot minimum in wei, above the token's own minimum.
    const txid = await devnetPay(gw.devnets.state, 'erc20_usdt', config.address_in, '100');
    const got = await waitForCallback(gw, (f) => f.txid_in === txid && f.result === 'sent', 120_000, 'token confirmed');
    expect(got.fields).toMatchObject({ coin: 'erc20_usdt', value_coin: '100.000000', address_in: config.address_in });
    expect(await balanceOf(gw, 'erc20_usdt', addressOut)).toBe(parseUnits(String(got.fields!.value_forwarded_coin), 6));
    expect((await logsOf(gw, 'erc20_usdt', callback)).body.callbacks.map((c) => c.coin)).toEqual(['erc20_usdt']);
    // The gas tank's ETH top-up to this address is not a payment of the merchant's ETH configuration.
    expect((await logsOf(gw, 'eth', callback)).body.callbacks).toEqual([]);
  }, 180_000);

  it('a GET-transport configuration delivers the merchant query pairs first, then the fields once', async () => {
    const callback = `${gw.merchantUrl}/get-cb?shop=42&ref=a%20b`;
    const config = await createConfig(gw, 'eth', { callback_url: callback, address_out: Wallet.createRandom().address, confirmations: 2 });
    const txid = await devnetPay(gw.devnets.state, 'eth', config.address_in, '0.3');
    const got = await waitForCallback(gw, (f) => f.txid_in === txid && f.result === 'sent', 120_000, 'GET confirmed');
    expect(got.method).toBe('GET');
    expect(got.rawBody.length).toBe(0);
    expect(got.url.startsWith('/get-cb?shop=42&ref=a%20b&uuid=')).toBe(true);
    const keys = [...new URLSearchParams(got.url.split('?')[1]).keys()];
    expect(keys.filter((k) => k === 'uuid')).toHaveLength(1);
    expect(got.fields!.pending).toBe('0');
  }, 180_000);
});

// Last: reverting the chain removes every later block, so nothing else may be in flight.
describe('a reorg before finality', () => {
  it('fails the payment: no forward, no confirmed callback, funds untouched', async () => {
    const eth = gw.devnets.state.ethereum!;
    const callback = `${gw.merchantUrl}/reorg?order=r1`;
    const addressOut = Wallet.createRandom().address;
    const config = await createConfig(gw, 'eth', { callback_url: callback, address_out: addressOut, pending: 1, post: 1, json: 1, confirmations: 200 });
    const snapshot = await jsonRpc<string>(eth.rpcUrl, 'evm_snapshot');
    const txid = await devnetPay(gw.devnets.state, 'eth', config.address_in, '0.7');
    await waitForCallback(gw, (f) => f.txid_in === txid && f.result === 'pending', 60_000, 'pending before the reorg');
    expect(await jsonRpc<boolean>(eth.rpcUrl, 'evm_revert', [snapshot])).toBe(true);
    await waitFor(async () => (await logsOf(gw, 'eth', callback)).body.callbacks?.[0]?.result === 'failed', 90_000, 'failed after the reorg');
    const rec = (await logsOf(gw, 'eth', callback)).body.callbacks[0];
    expect(rec).toMatchObject({ txid_in: txid, result: 'failed', txid_out: null, value_forwarded_coin: '0.000000000000000000' });
    expect(await balanceOf(gw, 'eth', addressOut)).toBe(0n);
    expect(gw.merchant.received.filter((r) => r.fields?.txid_in === txid && r.fields?.result === 'sent')).toHaveLength(0);
  }, 180_000);
});
