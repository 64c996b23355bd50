/**
 * fee_coin holds the costs that applied (SPEC 2.6), on a live anvil and PostgreSQL through the forward
 * activity: an ERC-20 forward withholds the gas top-up it actually sent — none when address_in already
 * holds the gas, a smaller one when an earlier forward left ether there — never the worst case; and ether
 * that a native deposit still on record needs is never burned as gas. Counted on chain.
 */
import { Wallet, parseEther } from 'ethers';
import { eq } from 'drizzle-orm';
import { createDepositActivities } from '../../activities/deposit';
import { priceOfNativeInAsset } from '../../activities/fee-inputs';
import type { ObservedDeposit } from '../../src/chains/adapter';
import { EvmAdapter } from '../../src/chains/evm/adapter';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { recordDeposit, storeFeePercent } from '../../src/db/queries/payments';
import { paymentConfigs, payments } from '../../src/db/schema';
import { ASSETS } from '../../src/domain/assets';
import { convertUnits, percentOf } from '../../src/domain/money';
import { STANDARD_TIERS } from '../../src/domain/standard-tiers';
import { DEVNET_PRICES, FixedPriceSource } from '../../src/prices/source';
import { evmGasTankKey } from '../../src/chains/sponsor';
import { createTestDatabase } from '../helpers/db';
import { anvilChain, testSeed, tmpDir, type LiveChain } from '../helpers/nodes';
import { waitFor } from '../helpers/process';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(120_000);

const seed = testSeed();
const prices = new FixedPriceSource(DEVNET_PRICES);
let node: AnvilDevnet;
let token: LiveChain;
let eth: LiveChain;
let database: Awaited<ReturnType<typeof createTestDatabase>>;

beforeAll(async () => {
  const tank = new Wallet(Buffer.from(evmGasTankKey(seed)).toString('hex'));
  database = await createTestDatabase();
  node = await startAnvil({ dir: tmpDir('gw-topup-charge-'), fund: [tank.address] });
  token = await anvilChain('erc20_usdt', seed, node);
  eth = await anvilChain('eth', seed, node);
});

afterAll(async () => {
  await eth?.stop();
  await token?.stop();
  await node?.stop();
  await database?.drop();
});

const acts = () =>
  createDepositActivities({
    db: database.db, withLock: database.withLock, adapter: async () => token.adapter, prices,
    feePolicy: { domainOverrides: {}, tiers: [...STANDARD_TIERS] }, treasuryAddress: () => undefined,
  });

const configs = new Map<string, string>();
async function configFor(index: bigint, addressOut: string): Promise<string> {
  const addressIn = token.adapter.deriveAddressIn(index);
  let id = configs.get(addressIn);
  if (!id) {
    [{ id }] = await database.db
      .insert(paymentConfigs)
      .values({
        ...callbackColumns(`https://shop.example/topup/${index}`), ticker: 'erc20_usdt', family: 'evm', addressIn, addressOut,
        derivationIndex: index, notifyPending: false, notifyConfirmations: 1, post: 0, json: 0, convert: 0, priority: 'default',
      })
      .returning();
    configs.set(addressIn, id);
  }
  return id;
}

async function record(chain: LiveChain, index: bigint, amount: bigint, addressOut: string): Promise<string> {
  const to = chain.adapter.deriveAddressIn(index);
  const from = await chain.adapter.head();
  const txid = await chain.pay(to, amount);
  const batch = await chain.adapter.scan(from, 100);
  const d = batch.blocks.flatMap((b) => b.deposits).find((x: ObservedDeposit) => x.txid === txid && x.recipient === to && x.ticker === chain.ticker)!;
  const { row } = await recordDeposit(database.db, {
    configId: await configFor(index, addressOut), ticker: chain.ticker, network: 'ethereum', depositKey: `deposit:ethereum:${txid}:${d.index}`, txidIn: txid,
    vout: null, blockNumber: d.blockNumber, blockHash: d.blockHash, valueBase: d.amount, dueHeight: d.blockNumber,
  });
  // Judged as the deposit's evaluation judges it: the standard fee of a new host, chosen once and stored.
  await storeFeePercent(database.db, row.uuid, '1.00');
  return row.uuid;
}

/** Forwards through the activity until mined; returns the stored plan and the payment's amounts. */
async function forward(uuid: string) {
  const a = acts();
  await a.recordProcessing(uuid);
  await a.forward(uuid);
  await waitFor(async () => {
    await token.mine(1);
    return (await a.forwardFate(uuid)).status === 'confirmed';
  }, 30_000, 'forward mined');
  await a.confirmedSnapshot(uuid);
  const [row] = await database.db.select().from(payments).where(eq(payments.uuid, uuid));
  const plan = JSON.parse(row.forwardRaw!) as { txs: Array<{ role: string }>; sponsorCost: string; forwarded: string };
  return { row, plan, sponsorCost: BigInt(plan.sponsorCost), forwarded: BigInt(plan.forwarded), fee: BigInt(row.feeBase!), value: BigInt(row.valueBase) };
}

const amount = 25_000_000n;
const expectedFee = async (sponsorCost: bigint, feePercent: string) =>
  percentOf(amount, feePercent) + (sponsorCost > 0n ? convertUnits(sponsorCost, 18, 6, (await priceOfNativeInAsset(prices, ASSETS.erc20_usdt))!) : 0n);

test('address_in already holding the gas: no top-up, and fee_coin is the commission alone', async () => {
  const out = Wallet.createRandom().address;
  const addressIn = token.adapter.deriveAddressIn(301n);
  await eth.pay(addressIn, parseEther('0.05')); // not a deposit of any payment: spare ether
  const f = await forward(await record(token, 301n, amount, out));
  expect(f.plan.txs.map((t) => t.role)).toEqual(['forward']);
  expect(f.sponsorCost).toBe(0n);
  expect(f.fee).toBe(await expectedFee(0n, f.row.feePercent!));
  expect(f.forwarded + f.fee).toBe(f.value);
  expect(await token.balanceOf(out)).toBe(f.forwarded);
});

test('a second forward from an address_in where the first left ether tops up less, and withholds only that', async () => {
  const out = Wallet.createRandom().address;
  const first = await forward(await record(token, 302n, amount, out));
  expect(first.plan.txs.map((t) => t.role)).toEqual(['gas-topup', 'forward']);
  expect(first.fee).toBe(await expectedFee(first.sponsorCost, first.row.feePercent!));
  const left = await (token.adapter as EvmAdapter).provider.getBalance(token.adapter.deriveAddressIn(302n));
  expect(left).toBeGreaterThan(0n);
  const second = await forward(await record(token, 302n, amount, out));
  expect(second.sponsorCost).toBeLessThan(first.sponsorCost);
  expect(second.fee).toBe(await expectedFee(second.sponsorCost, second.row.feePercent!));
  expect(second.fee).toBeLessThan(first.fee);
  expect(second.forwarded + second.fee).toBe(second.value);
  expect(await token.balanceOf(out)).toBe(first.forwarded + second.forwarded);
});

test('ether of a native deposit still on record at address_in is never burned as gas', async () => {
  const out = Wallet.createRandom().address;
  const ethDeposit = parseEther('1');
  await record(eth, 303n, ethDeposit, out); // an ETH payment (config reuse) not forwarded yet
  const provider = (token.adapter as EvmAdapter).provider;
  const f = await forward(await record(token, 303n, amount, out));
  expect(f.plan.txs.map((t) => t.role)).toEqual(['gas-topup', 'forward']);
  expect(f.fee).toBe(await expectedFee(f.sponsorCost, f.row.feePercent!));
  expect(await provider.getBalance(token.adapter.deriveAddressIn(303n))).toBeGreaterThanOrEqual(ethDeposit);
  expect(await token.balanceOf(out)).toBe(f.forwarded);
});
