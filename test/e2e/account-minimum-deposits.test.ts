import { Connection } from '@solana/web3.js';
import { JsonRpcProvider, Network, Wallet } from 'ethers';
import { sql } from 'drizzle-orm';
import { devnetAddress, devnetPay } from '../../devnet/drive';
import { ASSETS } from '../../src/domain/assets';
import { formatUnits, parseUnits } from '../../src/domain/money';
import { waitFor } from '../helpers/process';
import { stuckEvidence } from './drill-evidence';
import { balanceOf, catalogOf, createConfig, logsOf, startGateway, rowsOf, SwitchablePrices, waitForCallback, type Gateway } from './harness';

/**
 * DESIGN 12 on the account chains (anvil and surfnet, the whole gateway): a deposit of exactly the
 * published minimum of eth, erc20_usdt, sol and sol_usdc, at the highest fee percentage (the asset default,
 * 1.00) and at the lowest (a domain override at the lowest tier's 0.50), ends done with its confirmed
 * callback; value = forwarded + fee exactly; address_out holds the forwarded amount, counted on chain.
 * The SOL minimum here is the registry floor, 0.01 SOL: the failing deposit. On a564ea9 both SOL
 * cases failed: at 1.00 % the payment ended failed (the 100 000-lamport commission left at address_in is
 * below rent exemption), at 0.50 % it stayed processing, its forward retried for ever.
 */
const prices = new SwitchablePrices();
let gw: Gateway;

let stopTraffic: (() => Promise<void>) | undefined;
/** When the other customers' first transfer was mined. */
let trafficSince = 0;

beforeAll(async () => {
  gw = await startGateway({
    prices,
    // 'localhost' names the same loopback merchant: its configurations pay the lowest tier's percentage.
    env: { MINIMUM_REFRESH_MS: '2000', FEE_DOMAIN_OVERRIDES: 'localhost=0.50' },
  });
  stopTraffic = await otherCustomers();
}, 240_000);
afterAll(async () => {
  await stopTraffic?.();
  await gw?.stop();
}, 60_000);

/**
 * Other customers' transfers on anvil, one every 1.5 s with the tip the devnet's customer pays. The EVM
 * minimums follow the fee reading (the median tip of the last ten blocks), and on an otherwise empty local
 * chain the deposit's own transaction is the only tip in it: paying the published minimum raised the minimum
 * the deposit was then judged by (erc20_usdt 5.000000 → 7.379440, failed as below it). With traffic, as on
 * a public chain, one more transaction does not move the reading. Started once the first has been mined.
 */
async function otherCustomers(): Promise<() => Promise<void>> {
  const eth = gw.devnets.state.ethereum!;
  const provider = new JsonRpcProvider(eth.rpcUrl, Network.from(BigInt(eth.chainId)), { staticNetwork: true, cacheTimeout: -1 });
  const wallet = Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [wallet.address, '0x' + (10n ** 21n).toString(16)]);
  const tip = (await provider.getFeeData()).maxPriorityFeePerGas ?? undefined;
  const send = async () => void (await (await wallet.sendTransaction({ to: Wallet.createRandom().address, value: 1n, maxPriorityFeePerGas: tip })).wait());
  await send();
  trafficSince = Date.now();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await new Promise((r) => setTimeout(r, 1_500));
      await send().catch(() => undefined);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    provider.destroy();
  };
}

async function publishedMinimum(ticker: string): Promise<bigint> {
  await waitFor(async () => (await catalogOf(gw))[ticker]?.minimum != null, 90_000, `${ticker} minimum computed`);
  // Two refreshes (MINIMUM_REFRESH_MS) after the other customers' first transfer at the latest.
  await new Promise((r) => setTimeout(r, Math.max(0, trafficSince + 4_500 - Date.now())));
  return parseUnits((await catalogOf(gw))[ticker].minimum!, ASSETS[ticker].decimals);
}

describe.each([
  ['eth', '1.00'],
  ['eth', '0.50'],
  ['erc20_usdt', '1.00'],
  ['erc20_usdt', '0.50'],
  ['sol', '1.00'],
  ['sol', '0.50'],
  ['sol_usdc', '1.00'],
  ['sol_usdc', '0.50'],
] as const)('%s at the published minimum, fee %s %%', (ticker, feePercent) => {
  it('ends done with its confirmed callback: value = forwarded + fee, address_out holds the forward on chain', async () => {
    const a = ASSETS[ticker];
    const minimum = await publishedMinimum(ticker);
    if (ticker === 'sol') {
      // What stays at a Solana address_in after the forward is zero or rent-exempt, and the payout too:
      // the minimum models the chain (rent exemption of a plain account plus the signature fee at least).
      const rent = BigInt(await new Connection(gw.devnets.state.solana!.rpcUrl).getMinimumBalanceForRentExemption(0));
      expect(minimum).toBeGreaterThanOrEqual(rent + 5000n);
      expect(minimum).toBeGreaterThanOrEqual(parseUnits(a.minimumFloor, a.decimals));
    }
    const addressOut = await devnetAddress(gw.devnets.state, ticker);
    const host = feePercent === '0.50' ? 'localhost' : '127.0.0.1';
    const callback = `${gw.merchantUrl.replace('127.0.0.1', host)}/account-min?order=${ticker}-${feePercent}`;
    const config = await createConfig(gw, ticker, { callback_url: callback, address_out: addressOut, post: 1, json: 1 });
    const txidIn = await devnetPay(gw.devnets.state, ticker, config.address_in, formatUnits(minimum, a.decimals));

    const confirmed = await waitForCallback(gw, (f) => f.txid_in === txidIn && f.result === 'sent', 180_000, `${ticker} confirmed callback`).catch(async (e: unknown) => {
      // Why it is not done, from the gateway's own records, for whoever reads the failure.
      const why = await stuckEvidence(gw.database.url, gw.temporal.address).catch((x: unknown) => String(x));
      throw new Error(`${String(e)}; not done: ${JSON.stringify(why)}`);
    });
    const c = confirmed.fields as Record<string, string>;
    await waitFor(async () => (await logsOf(gw, ticker, callback)).body.callbacks?.[0]?.result === 'done', 60_000, `${ticker} done`);
    const value = parseUnits(c.value_coin, a.decimals);
    const forwardedCoin = parseUnits(c.value_forwarded_coin, a.decimals);
    expect(c.fee).toBe(feePercent);
    expect(value).toBe(minimum);
    expect(forwardedCoin + parseUnits(c.fee_coin, a.decimals)).toBe(value);

    const [paid] = await rowsOf<{ result: string; value_base: string; forwarded_base: string; fee_base: string; fee_percent: string; txid_out: string }>(
      gw, sql`SELECT result, value_base::text, forwarded_base::text, fee_base::text, fee_percent, txid_out FROM payments WHERE txid_in = ${txidIn}`,
    );
    expect(paid).toMatchObject({ result: 'done', fee_percent: feePercent, txid_out: c.txid_out });
    const forwarded = BigInt(paid.forwarded_base);
    expect(forwarded).toBe(forwardedCoin);
    expect(forwarded).toBeGreaterThan(0n);
    expect(BigInt(paid.value_base)).toBe(forwarded + BigInt(paid.fee_base));
    // On chain: address_out (fresh) holds exactly the forwarded amount.
    await waitFor(async () => (await balanceOf(gw, ticker, addressOut)) === forwarded, 30_000, `${ticker} payout counted on chain`);
  }, 300_000);
});
