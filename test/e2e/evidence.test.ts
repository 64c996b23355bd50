import { Wallet } from 'ethers';
import { devnetPay } from '../../devnet/drive';
import { waitFor } from '../helpers/process';
import { createConfig, logsOf, startGateway, SwitchablePrices, waitForCallback, type Gateway } from './harness';

/**
 * SPEC 3: "If pricing or cost evidence is unavailable, the pending callback is withheld while the deposit
 * stays available for processing." An ERC-20 forward's gas is paid in ETH and recovered in the token at
 * the price; with no price the deposit must be kept (not failed, not forwarded at a guess) and finish once
 * a price exists again.
 */
const prices = new SwitchablePrices(false);
let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway({ prices });
}, 240_000);
afterAll(async () => {
  await gw?.stop();
}, 60_000);

it('no price: pending callback withheld, deposit kept; price back: forwarded and confirmed', async () => {
  const callback = `${gw.merchantUrl}/evidence?order=e1`;
  const config = await createConfig(gw, 'erc20_usdt', { callback_url: callback, address_out: Wallet.createRandom().address, pending: 1, post: 1, json: 1, confirmations: 2 });
  const txid = await devnetPay(gw.devnets.state, 'erc20_usdt', config.address_in, '50');
  await waitFor(async () => (await logsOf(gw, 'erc20_usdt', callback)).body.callbacks?.length === 1, 60_000, 'deposit recorded');
  // Well past finality (2 blocks at 1 s): still kept, nothing sent, nothing forwarded.
  await new Promise((r) => setTimeout(r, 10_000));
  const kept = (await logsOf(gw, 'erc20_usdt', callback)).body.callbacks[0];
  expect(kept).toMatchObject({ txid_in: txid, txid_out: null });
  expect(['pending', 'processing']).toContain(kept.result);
  expect(gw.merchant.received.filter((r) => r.fields?.txid_in === txid)).toHaveLength(0);

  prices.available = true;
  const confirmed = await waitForCallback(gw, (f) => f.txid_in === txid && f.result === 'sent', 180_000, 'confirmed once priced');
  expect(confirmed.fields!.price).toBe('1.00');
  // The pending stage was never started for this payment: withheld, not sent late.
  expect(gw.merchant.received.filter((r) => r.fields?.txid_in === txid && r.fields?.result === 'pending')).toHaveLength(0);
}, 300_000);
