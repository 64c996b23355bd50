import { sql } from 'drizzle-orm';
import { devnetAddress, devnetMine, devnetPay } from '../../devnet/drive';
import { BitcoinRpc, toSats } from '../../src/chains/utxo/rpc';
import { ASSETS } from '../../src/domain/assets';
import { formatUnits, parseUnits, percentOf } from '../../src/domain/money';
import { waitFor } from '../helpers/process';
import { balanceOf, catalogOf, createConfig, startGateway, rowsOf, SwitchablePrices, type Gateway } from './harness';

/**
 * DESIGN 12 on real nodes (Bitcoin Knots, litecoind and bchd in regtest, the whole gateway): a deposit of exactly
 * the published minimum, at the highest fee percentage (the asset default, 1.00) and at the lowest (a
 * domain override at the lowest tier's 0.50), is forwarded; value = forwarded + fee exactly; the miner's
 * share stays within MINIMUM_MAX_COST_PERCENT; counted on chain.
 */
const prices = new SwitchablePrices();
let gw: Gateway;

beforeAll(async () => {
  gw = await startGateway({
    prices,
    devnets: { bitcoin: true, bitcoincash: true },
    // 'localhost' names the same loopback merchant: its configurations pay the lowest tier's percentage.
    env: { MINIMUM_REFRESH_MS: '2000', FEE_DOMAIN_OVERRIDES: 'localhost=0.50' },
  });
}, 240_000);
afterAll(async () => {
  await gw?.stop();
}, 60_000);

const NETWORK = { btc: 'bitcoin', ltc: 'litecoin', bch: 'bitcoincash' } as const;
const DUST = { btc: 294n, ltc: 2940n, bch: 546n } as const;

describe.each([
  ['btc', '1.00'],
  ['btc', '0.50'],
  ['ltc', '1.00'],
  ['ltc', '0.50'],
  ['bch', '1.00'],
  ['bch', '0.50'],
] as const)('%s at the published minimum, fee %s %%', (ticker, feePercent) => {
  it('is forwarded: value = forwarded + fee, the miner within MINIMUM_MAX_COST_PERCENT, counted on chain', async () => {
    const a = ASSETS[ticker];
    await waitFor(async () => (await catalogOf(gw))[ticker]?.minimum != null, 60_000, `${ticker} minimum computed`);
    const minimum = parseUnits((await catalogOf(gw))[ticker].minimum!, a.decimals);
    // Two outputs (payout and commission) at the fallback 20 sat/vB: 142 vB × 20 = 2840 sat, 5 % of 56 800.
    if (ticker === 'btc') expect(minimum).toBeGreaterThanOrEqual(56_800n);
    const addressOut = await devnetAddress(gw.devnets.state, ticker);
    const host = feePercent === '0.50' ? 'localhost' : '127.0.0.1';
    const callback = `${gw.merchantUrl.replace('127.0.0.1', host)}/utxo-min?order=${ticker}-${feePercent}`;
    const config = await createConfig(gw, ticker, { callback_url: callback, address_out: addressOut, post: 1, json: 1 });
    const txidIn = await devnetPay(gw.devnets.state, ticker, config.address_in, formatUnits(minimum, a.decimals));
    const miner = setInterval(() => void devnetMine(gw.devnets.state, ticker, 1).catch(() => undefined), 1000);
    try {
      await waitFor(
        async () => (await rowsOf<{ n: number }>(gw, sql`SELECT count(*)::int AS n FROM payments WHERE txid_in = ${txidIn} AND snapshot IS NOT NULL`))[0].n === 1,
        150_000,
        `${ticker} forwarded`,
      );
      // The forward's block is mined; one more makes sure the chain counts it.
      await devnetMine(gw.devnets.state, ticker, 1);
    } finally {
      clearInterval(miner);
    }
    const [paid] = await rowsOf<{ value_base: string; forwarded_base: string; fee_base: string; fee_percent: string; txid_out: string; snapshot: Record<string, string> }>(
      gw, sql`SELECT value_base::text, forwarded_base::text, fee_base::text, fee_percent, txid_out, snapshot FROM payments WHERE txid_in = ${txidIn}`,
    );
    expect(paid.fee_percent).toBe(feePercent);
    const value = BigInt(paid.value_base);
    const forwarded = BigInt(paid.forwarded_base);
    expect(value).toBe(minimum);
    expect(forwarded + BigInt(paid.fee_base)).toBe(value);
    expect(parseUnits(paid.snapshot.value_forwarded_coin, a.decimals) + parseUnits(paid.snapshot.fee_coin, a.decimals)).toBe(parseUnits(paid.snapshot.value_coin, a.decimals));

    // On chain: address_out holds the forwarded amount; the forward pays it, the commission to the treasury
    // when it is above dust, and the miner the rest.
    expect(await balanceOf(gw, ticker, addressOut)).toBe(forwarded);
    const node = new BitcoinRpc(gw.devnets.state[NETWORK[ticker]]!.rpcUrl);
    const tx = await node.call<{ confirmations?: number; vout: Array<{ value: string; scriptPubKey: { address?: string; addresses?: string[] } }> }>('getrawtransaction', [paid.txid_out, true]);
    expect(tx.confirmations).toBeGreaterThanOrEqual(1);
    // bchd names a cashaddr output without its prefix.
    const bare = (a: string | undefined) => a?.replace(/^bch[a-z]*:/, '');
    const outputs = tx.vout.map((v) => ({ address: bare(v.scriptPubKey.address ?? v.scriptPubKey.addresses?.[0]), value: toSats(v.value) }));
    expect(outputs[0]).toEqual({ address: bare(addressOut), value: forwarded });
    const treasury = gw.services.treasuryAddress(NETWORK[ticker]);
    const commission = percentOf(value, feePercent);
    const toTreasury = outputs.slice(1).reduce((s, o) => s + o.value, 0n);
    if (outputs.length === 2) expect(outputs[1]).toEqual({ address: bare(treasury), value: commission });
    else expect(outputs).toHaveLength(1);
    const minerShare = value - forwarded - toTreasury;
    expect(minerShare * 10_000n).toBeLessThanOrEqual(value * BigInt(Math.round(Number(gw.cfg.minimumMaxCostPercent) * 100)));
    // The commission has an output when the node relays it (P2WPKH treasury: dust below 294 sat on Knots,
    // 2940 lit on litecoind); below that it went to the miner, withheld all the same.
    expect(outputs).toHaveLength(commission >= DUST[ticker] ? 2 : 1);
    expect(value - forwarded - commission).toBe(minerShare - (outputs.length === 2 ? 0n : commission));
  }, 240_000);
});
