import { Wallet } from 'ethers';
import { devnetPay } from '../../devnet/drive';
import { jsonRpc } from '../../src/chains/json-rpc';
import { parseUnits } from '../../src/domain/money';
import { waitFor } from '../helpers/process';
import { balanceOf, createConfig, logsOf, startGateway, waitForCallback, type Gateway } from './harness';

/**
 * A deposit judged reorganised out, then mined again (issue 55, item 3), on the whole gateway: anvil, real
 * PostgreSQL, the Temporal dev server, the watcher. The deposit is reverted away before finality (its
 * payment fails, its workflow run ends failed), then the customer's same signed bytes are mined again: the
 * watcher starts a new lifecycle for the same deposit, which takes the payment (same UUID) to its confirmed
 * callback and forwards the funds, counted on chain.
 */
let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway({ depositPollInterval: '1 hour' });
}, 240_000);
afterAll(async () => {
  await gw?.stop();
}, 60_000);

it('a reorganised deposit mined again is picked up: same UUID, forwarded, confirmed callback', async () => {
  const eth = gw.devnets.state.ethereum!;
  const callback = `${gw.merchantUrl}/remined?order=r2`;
  const addressOut = Wallet.createRandom().address;
  const config = await createConfig(gw, 'eth', { callback_url: callback, address_out: addressOut, pending: 1, post: 1, json: 1, confirmations: 200 });
  const snapshot = await jsonRpc<string>(eth.rpcUrl, 'evm_snapshot');
  const txid = await devnetPay(gw.devnets.state, 'eth', config.address_in, '0.7');
  const raw = await jsonRpc<string>(eth.rpcUrl, 'eth_getRawTransactionByHash', [txid]);
  const pending = await waitForCallback(gw, (f) => f.txid_in === txid && f.result === 'pending', 60_000, 'pending before the reorg');
  const uuid = pending.fields!.uuid;

  expect(await jsonRpc<boolean>(eth.rpcUrl, 'evm_revert', [snapshot])).toBe(true);
  await waitFor(async () => (await logsOf(gw, 'eth', callback)).body.callbacks?.[0]?.result === 'failed', 90_000, 'failed after the reorg');
  expect(await balanceOf(gw, 'eth', addressOut)).toBe(0n);

  // The customer's same bytes mined again (anvil's revert forgot them), then finality.
  await jsonRpc(eth.rpcUrl, 'eth_sendRawTransaction', [raw]);
  await waitFor(async () => (await logsOf(gw, 'eth', callback)).body.callbacks?.[0]?.result === 'pending', 60_000, 'the payment taken up again');
  await jsonRpc(eth.rpcUrl, 'anvil_mine', ['0xc8']);
  const sent = await waitForCallback(gw, (f) => f.txid_in === txid && f.result === 'sent', 120_000, 'confirmed callback after the deposit was mined again');
  expect(sent.fields).toMatchObject({ uuid, pending: 0 });
  const rec = (await logsOf(gw, 'eth', callback)).body.callbacks;
  expect(rec).toHaveLength(1);
  expect(rec[0]).toMatchObject({ uuid, txid_in: txid });
  expect(['sent', 'done']).toContain(rec[0].result);
  expect(await balanceOf(gw, 'eth', addressOut)).toBe(parseUnits(String(sent.fields!.value_forwarded_coin), 18));
}, 400_000);
