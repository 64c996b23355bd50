import { JsonRpcProvider, Network, Wallet, parseEther, type Contract } from 'ethers';
import { verifyCallback } from '../../src/callbacks/verify';
import { parseUnits } from '../../src/domain/money';
import { deployPayer } from '../helpers/payer-contracts';
import { waitFor } from '../helpers/process';
import { balanceOf, createConfig, logsOf, startGateway, waitForCallback, type Gateway } from './harness';

/**
 * Ether a contract sends to address_in, end to end on the whole gateway (anvil, PostgreSQL, the Temporal
 * dev server, the worker's watcher): a forwarder's payment and one batch transaction paying two
 * configurations are each seen once, called back confirmed and forwarded; what reaches each address_out
 * is counted on chain.
 */
let gw: Gateway;
let provider: JsonRpcProvider;
let payer: Contract;
beforeAll(async () => {
  gw = await startGateway();
  const eth = gw.devnets.state.ethereum!;
  provider = new JsonRpcProvider(eth.rpcUrl, Network.from(BigInt(eth.chainId)), { staticNetwork: true, cacheTimeout: -1 });
  payer = await deployPayer(new Wallet(eth.customerKey, provider));
}, 240_000);
afterAll(async () => {
  provider?.destroy();
  await gw?.stop();
}, 60_000);

/** A configuration paid by the contract, and its callback URL and payout address. */
async function configuration(order: string) {
  const addressOut = Wallet.createRandom().address;
  const callback = `${gw.merchantUrl}/internal?order=${order}`;
  const config = await createConfig(gw, 'eth', { callback_url: callback, address_out: addressOut, pending: 1, post: 1, json: 1, confirmations: 2 });
  return { addressIn: config.address_in, addressOut, callback };
}

/**
 * The confirmed callback of the deposit of `txid` to `addressIn`, with its exact amount; the forward's amount
 * is what address_out holds. (Its pending callback is not waited for: none goes out once the deposit is
 * final, SPEC 3 rule 1, and with one-second blocks on a loaded machine finality can come first.)
 */
async function deliveredAndForwarded(txid: string, c: { addressIn: string; addressOut: string; callback: string }, amount: bigint) {
  const sent = await waitForCallback(gw, (f) => f.txid_in === txid && f.address_in === c.addressIn && f.result === 'sent', 240_000, `confirmed callback ${c.addressIn}`);
  expect(verifyCallback({ method: sent.method, url: sent.url, headers: sent.headers, rawBody: sent.rawBody }, gw.publicKey).ok).toBe(true);
  const f = sent.fields!;
  expect(parseUnits(String(f.value_coin), 18)).toBe(amount);
  const forwarded = parseUnits(String(f.value_forwarded_coin), 18);
  expect(forwarded + parseUnits(String(f.fee_coin), 18)).toBe(amount);
  expect(forwarded).toBeGreaterThan(0n);
  await waitFor(async () => (await balanceOf(gw, 'eth', c.addressOut)) === forwarded, 30_000, `address_out ${c.addressOut} balance`);
  // One payment for the deposit, never two.
  await waitFor(async () => (await logsOf(gw, 'eth', c.callback)).body.callbacks?.[0]?.result === 'done', 30_000, 'logs done');
  expect((await logsOf(gw, 'eth', c.callback)).body.callbacks.map((x) => x.txid_in)).toEqual([txid]);
}

it('a forwarder contract\'s payment is called back and forwarded once', async () => {
  const c = await configuration('forwarder');
  const amount = parseEther('0.4');
  const tx = await payer.getFunction('forward')(c.addressIn, { value: amount });
  await tx.wait();
  await deliveredAndForwarded(tx.hash as string, c, amount);
}, 400_000);

it('one batch transaction paying two configurations: two payments with their exact amounts, both forwarded', async () => {
  const [b, c] = [await configuration('batch-b'), await configuration('batch-c')];
  const amounts = [parseEther('0.25'), parseEther('0.0375')];
  const tx = await payer.getFunction('batch')([b.addressIn, c.addressIn], amounts, { value: amounts[0] + amounts[1] });
  await tx.wait();
  await Promise.all([deliveredAndForwarded(tx.hash as string, b, amounts[0]), deliveredAndForwarded(tx.hash as string, c, amounts[1])]);
}, 400_000);
