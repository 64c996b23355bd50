import { Contract, JsonRpcProvider, Network, Wallet, parseEther, type TransactionResponse } from 'ethers';
import { eq } from 'drizzle-orm';
import { jsonRpc } from '../../src/chains/json-rpc';
import { ERC20 } from '../../src/chains/evm/erc20';
import { payments } from '../../src/db/schema';
import { parseUnits } from '../../src/domain/money';
import { waitFor } from '../helpers/process';
import { balanceOf, createConfig, logsOf, startGateway, type Gateway } from './harness';

/**
 * Money integrity on anvil, counted on chain: several ETH and ERC-20 deposits to one address_in, paid
 * into the same blocks, are each forwarded exactly once (one nonce each, one txid_out each, the payout
 * balance equal to what the logs report); a forward the node dropped from its mempool is sent again.
 */
let gw: Gateway;
let provider: JsonRpcProvider;
beforeAll(async () => {
  gw = await startGateway();
  const eth = gw.devnets.state.ethereum!;
  provider = new JsonRpcProvider(eth.rpcUrl, Network.from(BigInt(eth.chainId)), { staticNetwork: true, cacheTimeout: -1 });
}, 240_000);
afterAll(async () => {
  provider?.destroy();
  await gw?.stop();
}, 60_000);

type Record = { uuid: string; txid_in: string; txid_out: string | null; result: string; value_forwarded_coin: string };

async function records(ticker: string, callback: string): Promise<Record[]> {
  const { status, body } = await logsOf(gw, ticker, callback);
  return status === 200 ? (body.callbacks as unknown as Record[]) : [];
}

/** The customer pays every amount in one burst (consecutive nonces, no wait between): same or adjacent blocks. */
async function burst(payments: Array<{ ticker: 'eth' | 'erc20_usdt'; to: string; amount: string }>): Promise<void> {
  const eth = gw.devnets.state.ethereum!;
  const customer = new Wallet(eth.customerKey, provider);
  const token = new Contract(eth.tokens.erc20_usdt, ERC20, customer);
  let nonce = await provider.getTransactionCount(customer.address, 'pending');
  const sent: TransactionResponse[] = [];
  for (const p of payments) {
    sent.push(
      p.ticker === 'eth'
        ? await customer.sendTransaction({ to: p.to, value: parseEther(p.amount), nonce: nonce++ })
        : ((await token.getFunction('transfer')(p.to, parseUnits(p.amount, 6), { nonce: nonce++ })) as TransactionResponse),
    );
  }
  await Promise.all(sent.map((t) => t.wait(1, 60_000)));
}

describe('several deposits to one address_in', () => {
  it('forwards each exactly once: one nonce and one txid_out per payment, payouts equal the logs', async () => {
    const tokenOut = Wallet.createRandom().address;
    const callback = `${gw.merchantUrl}/shop/callback?order=one-address`;
    // One configuration taking erc20_usdt and, reused, eth: one address_in for both.
    const cfg = await createConfig(gw, 'erc20_usdt', { callback_url: callback, address_out: tokenOut, confirmations: 2, post: 1, json: 1 });
    const again = await createConfig(gw, 'eth', { callback_url: callback, address_out: tokenOut, confirmations: 2, post: 1, json: 1 });
    expect(again.address_in).toBe(cfg.address_in);
    const addressIn = cfg.address_in;
    await burst([
      { ticker: 'erc20_usdt', to: addressIn, amount: '21.5' },
      { ticker: 'erc20_usdt', to: addressIn, amount: '21.5' },
      { ticker: 'eth', to: addressIn, amount: '0.4' },
      { ticker: 'erc20_usdt', to: addressIn, amount: '33' },
      { ticker: 'eth', to: addressIn, amount: '0.4' },
    ]);

    await waitFor(
      async () => (await records('erc20_usdt', callback)).filter((r) => r.result === 'done').length === 3 &&
        (await records('eth', callback)).filter((r) => r.result === 'done').length === 2,
      150_000,
      'five payments done',
    );
    const tokens = await records('erc20_usdt', callback);
    const eths = await records('eth', callback);
    const all = [...tokens, ...eths];
    expect(all).toHaveLength(5);
    expect(new Set(all.map((r) => r.txid_out)).size).toBe(5);
    // On chain: address_in sent exactly five transactions (the five forwards), and the payout address
    // holds exactly what the logs say was forwarded.
    expect(await provider.getTransactionCount(addressIn, 'latest')).toBe(5);
    const sum = (rs: Record[], decimals: number) => rs.reduce((a, r) => a + parseUnits(r.value_forwarded_coin, decimals), 0n);
    expect(await balanceOf(gw, 'erc20_usdt', tokenOut)).toBe(sum(tokens, 6));
    expect(await balanceOf(gw, 'eth', tokenOut)).toBe(sum(eths, 18));
    for (const r of all) {
      const receipt = await provider.getTransactionReceipt(r.txid_out!);
      expect(receipt?.status).toBe(1);
      expect(receipt!.from).toBe(addressIn);
    }
  }, 200_000);
});

describe('a forward the node dropped', () => {
  it('is sent again with the same bytes and lands once', async () => {
    const eth = gw.devnets.state.ethereum!;
    const out = Wallet.createRandom().address;
    const callback = `${gw.merchantUrl}/shop/callback?order=dropped`;
    const cfg = await createConfig(gw, 'eth', { callback_url: callback, address_out: out, confirmations: 2 });
    // Blocks are made by this test only: the deposit's, then the one that gives it its second confirmation.
    await jsonRpc(eth.rpcUrl, 'evm_setIntervalMining', [0]);
    try {
      const customer = new Wallet(eth.customerKey, provider);
      await customer.sendTransaction({ to: cfg.address_in, value: parseEther('0.3') });
      await jsonRpc(eth.rpcUrl, 'anvil_mine', ['0x1']);
      await waitFor(async () => (await records('eth', callback)).length === 1, 30_000, 'deposit recorded');
      await jsonRpc(eth.rpcUrl, 'anvil_mine', ['0x1']);
      let txid = '';
      await waitFor(
        async () => {
          const [row] = await gw.database.db.select().from(payments).where(eq(payments.uuid, (await records('eth', callback))[0].uuid));
          txid = row?.txidOut ?? '';
          return txid !== '' && (await provider.getTransaction(txid)) !== null;
        },
        60_000,
        'forward in the mempool',
      );
      // The mempool forgets it, as a node under load or restarted would.
      await jsonRpc(eth.rpcUrl, 'anvil_dropTransaction', [txid]);
      expect(await provider.getTransaction(txid)).toBeNull();
      await waitFor(async () => (await provider.getTransaction(txid)) !== null, 60_000, 'forward sent again');
      await jsonRpc(eth.rpcUrl, 'evm_setIntervalMining', [1]);
      await waitFor(async () => (await records('eth', callback))[0]?.result === 'done', 60_000, 'payment done');
      const [r] = await records('eth', callback);
      expect(r.txid_out).toBe(txid);
      expect(await balanceOf(gw, 'eth', out)).toBe(parseUnits(r.value_forwarded_coin, 18));
      expect(await provider.getTransactionCount(cfg.address_in, 'latest')).toBe(1);
    } finally {
      await jsonRpc(eth.rpcUrl, 'evm_setIntervalMining', [1]);
    }
  }, 200_000);
});
