/**
 * Solana forwards on a real surfnet, counted on chain: a commission too small to stay at address_in never
 * blocks a SOL forward (it moves to the treasury or the fee payer in the same transaction, or is waived into
 * the forward); the payout floor a new address_out needs; errors told apart by type and code, never by a
 * message holding an amount; the priority fee's instructions and cost; a forward whose blockhash expired
 * unsent is signed again and lands (activity level); an SPL forward withholds only the sponsor cost its
 * plan had (no rent for an existing token account): value = forwarded + fee exactly.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ComputeBudgetInstruction, ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { eq } from 'drizzle-orm';
import { createDepositActivities } from '../../activities/deposit';
import { planToJson } from '../../activities/forward-support';
import { priceOfNativeInAsset } from '../../activities/fee-inputs';
import { InsufficientAmountError, NodeUnavailableError, type ForwardPlan, type ObservedDeposit } from '../../src/chains/adapter';
import { sendAndPoll, startSurfnet, type SurfnetDevnet } from '../../devnet/surfnet';
import { SOL_FORWARD_UNITS } from '../../src/chains/sol/fees';
import { SolAdapter } from '../../src/chains/sol/adapter';
import { HttpStatusError, RpcTransportError } from '../../src/chains/sol/rpc';
import { solFeePayerSeed } from '../../src/chains/sponsor';
import { storeForwardOnce } from '../../src/db/queries/forwards';
import { recordDeposit, storeFeePercent } from '../../src/db/queries/payments';
import { paymentConfigs, payments } from '../../src/db/schema';
import { ASSETS } from '../../src/domain/assets';
import { convertUnits, percentOf } from '../../src/domain/money';
import { STANDARD_TIERS } from '../../src/domain/standard-tiers';
import { DEVNET_PRICES, FixedPriceSource } from '../../src/prices/source';
import { createTestDatabase } from '../helpers/db';
import { surfnetChain, testSeed, type LiveChain } from '../helpers/nodes';
import { waitFor } from '../helpers/process';
import { callbackColumns } from '../helpers/callback-columns';

jest.setTimeout(180_000);

const seed = testSeed();
let node: SurfnetDevnet;
let sol: LiveChain;
let spl: LiveChain;
let adapter: SolAdapter;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
const prices = new FixedPriceSource(DEVNET_PRICES);
const feePayer = Keypair.fromSeed(solFeePayerSeed(seed)).publicKey;

beforeAll(async () => {
  [node, database] = await Promise.all([startSurfnet({ fund: [feePayer.toBase58()], slotTimeMs: 50 }), createTestDatabase()]);
  sol = await surfnetChain('sol', seed, node);
  spl = await surfnetChain('sol_usdc', seed, node);
  adapter = sol.adapter as SolAdapter;
});

afterAll(async () => {
  await spl?.stop();
  await sol?.stop();
  await node?.stop();
  await database?.drop();
});

const lamports = (address: string | PublicKey) => node.connection.getBalance(new PublicKey(address), 'confirmed').then(BigInt);
const fresh = () => Keypair.generate().publicKey.toBase58();

async function depositTo(chain: LiveChain, index: bigint, amount: bigint, a: SolAdapter = chain.adapter as SolAdapter): Promise<ObservedDeposit> {
  const to = a.deriveAddressIn(index);
  const from = await a.head();
  const txid = await chain.pay(to, amount);
  let found: ObservedDeposit | undefined;
  await waitFor(async () => {
    const batch = await a.scan(from, 500);
    found = batch.blocks.flatMap((b) => b.deposits).find((x) => x.txid === txid && x.recipient === to && x.ticker === chain.ticker);
    return found !== undefined;
  }, 30_000, 'deposit scanned');
  return found!;
}

async function land(plan: ForwardPlan, a: SolAdapter = adapter): Promise<bigint> {
  await a.broadcast(plan);
  await waitFor(async () => (await a.forwardStatus(plan)).status === 'confirmed', 30_000, 'forward confirmed');
  const tx = await node.connection.getTransaction(plan.txidOut, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
  return BigInt(tx!.meta!.fee);
}

/** The forward's ComputeBudget instructions, decoded from its signed bytes. */
function budgetOf(plan: ForwardPlan): { units?: number; microLamports?: bigint } {
  const tx = Transaction.from(Buffer.from(plan.txs[plan.txs.length - 1].raw, 'hex'));
  const out: { units?: number; microLamports?: bigint } = {};
  for (const ix of tx.instructions.filter((i) => i.programId.equals(ComputeBudgetProgram.programId))) {
    const type = ComputeBudgetInstruction.decodeInstructionType(ix);
    if (type === 'SetComputeUnitLimit') out.units = ComputeBudgetInstruction.decodeSetComputeUnitLimit(ix).units;
    if (type === 'SetComputeUnitPrice') out.microLamports = BigInt(ComputeBudgetInstruction.decodeSetComputeUnitPrice(ix).microLamports);
  }
  return out;
}

describe('a commission too small to stay at address_in never blocks a SOL forward', () => {
  const amount = 10_000_000n; // 0.01 SOL, the published minimum
  const commission = percentOf(amount, '1.00');

  test('to a rent-exempt treasury, in the same transaction; the forward carries its priority fee instructions', async () => {
    const treasury = fresh();
    await sol.pay(treasury, 1_000_000_000n);
    const d = await depositTo(sol, 101n, amount);
    const out = fresh();
    const plan = await adapter.prepareForward({ deposit: d, derivationIndex: 101n, addressOut: out, priority: 'default', commission, treasuryAddress: treasury });
    expect(budgetOf(plan)).toEqual({ units: SOL_FORWARD_UNITS, microLamports: 0n });
    expect(plan.forwarded + plan.networkFee + commission).toBe(amount);
    const fee = await land(plan);
    expect(fee).toBe(plan.networkFee);
    expect(await lamports(out)).toBe(plan.forwarded);
    expect(await lamports(d.recipient)).toBe(0n);
    expect(await lamports(treasury)).toBe(1_000_000_000n + commission);
  });

  test('to the fee payer when the treasury holds nothing (the commission alone would not make it rent-exempt)', async () => {
    const treasury = fresh();
    const d = await depositTo(sol, 102n, amount);
    const out = fresh();
    const plan = await adapter.prepareForward({ deposit: d, derivationIndex: 102n, addressOut: out, priority: 'default', commission, treasuryAddress: treasury });
    const payerBefore = await lamports(feePayer);
    await land(plan);
    expect(await lamports(out)).toBe(plan.forwarded);
    expect(plan.forwarded + plan.networkFee + commission).toBe(amount);
    expect(await lamports(d.recipient)).toBe(0n);
    expect(await lamports(treasury)).toBe(0n);
    expect(await lamports(feePayer)).toBe(payerBefore + commission);
  });

  test('waived into the forward when neither the treasury nor the fee payer can take it', async () => {
    // Another operator's seed: its fee payer was never funded.
    const other = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: node.rpcUrl, seed: testSeed(), tokens: {} });
    try {
      const d = await depositTo(sol, 103n, amount, other);
      const out = fresh();
      const plan = await other.prepareForward({ deposit: d, derivationIndex: 103n, addressOut: out, priority: 'default', commission });
      expect(plan.forwarded).toBe(amount - plan.networkFee);
      const fee = await land(plan, other);
      expect(fee).toBe(plan.networkFee);
      expect(await lamports(out)).toBe(plan.forwarded);
      expect(await lamports(d.recipient)).toBe(0n);
      expect(await lamports(other.feePayer().publicKey)).toBe(0n);
    } finally {
      await other.close();
    }
  });

  test('lamports of another deposit at address_in are never moved with the commission: the forward waits instead', async () => {
    const d = await depositTo(sol, 106n, amount);
    await sol.pay(d.recipient, 1_000n); // a second, tiny deposit (below every minimum) to the same address_in
    const treasury = fresh();
    await sol.pay(treasury, 1_000_000_000n);
    const refusal = adapter.prepareForward({ deposit: d, derivationIndex: 106n, addressOut: fresh(), priority: 'default', commission, treasuryAddress: treasury });
    await expect(refusal).rejects.toBeInstanceOf(NodeUnavailableError);
    expect(await lamports(d.recipient)).toBe(amount + 1_000n);
    expect(await lamports(treasury)).toBe(1_000_000_000n);
  });

  test('a commission that is rent-exempt on its own stays at address_in, as before', async () => {
    const big = 200_000_000n;
    const kept = percentOf(big, '1.00');
    const d = await depositTo(sol, 104n, big);
    const out = fresh();
    const plan = await adapter.prepareForward({ deposit: d, derivationIndex: 104n, addressOut: out, priority: 'default', commission: kept, treasuryAddress: fresh() });
    await land(plan);
    expect(await lamports(out)).toBe(plan.forwarded);
    expect(await lamports(d.recipient)).toBe(kept);
    expect(plan.forwarded + plan.networkFee + kept).toBe(big);
  });

  test('the payout floor is the rent exemption of an empty account; a forward below it to a new address_out is refused as insufficient', async () => {
    const rent = BigInt(await node.connection.getMinimumBalanceForRentExemption(0));
    expect((await adapter.estimateForwardCost('sol', 'default')).payoutFloor).toBe(rent);
    const d = await depositTo(sol, 105n, rent + 10_000n);
    const refusal = adapter.prepareForward({ deposit: d, derivationIndex: 105n, addressOut: fresh(), priority: 'default', commission: 20_000n });
    await expect(refusal).rejects.toBeInstanceOf(InsufficientAmountError);
  });
});

describe('errors are told by type and code, never by text that can hold an amount', () => {
  test('a refusal whose text holds 429000 and 500000 stays a refusal (not a node being unavailable)', async () => {
    const d = await depositTo(sol, 111n, 2_000_000n);
    const refusal = adapter.prepareForward({ deposit: { ...d, amount: 429_000n }, derivationIndex: 111n, addressOut: fresh(), priority: 'default', commission: 500_000n });
    await expect(refusal).rejects.toBeInstanceOf(InsufficientAmountError);
    await expect(refusal).rejects.toThrow(/429000/);
    await expect(refusal).rejects.not.toBeInstanceOf(NodeUnavailableError);
  });

  test('a real 503 and 429 from a proxy in front of surfnet, and a refused connection, are NodeUnavailableError; a node without the priority-fee method means no priority fee', async () => {
    let status = 0;
    let noFeeMethod = false;
    const proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string };
        if (noFeeMethod && call.method === 'getRecentPrioritizationFees') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'Method not found' } }));
          return;
        }
        if (status) {
          res.writeHead(status, { 'content-type': 'text/plain' }).end('busy: 500000 lamports, retry after 429000 ms');
          return;
        }
        void fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
          .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(Buffer.from(await r.arrayBuffer())));
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const behind = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, seed, tokens: {} });
    try {
      expect((await behind.head()).height).toBeGreaterThan(0n);
      // A provider that does not serve recent prioritization fees: no priority fee, no endless wait.
      noFeeMethod = true;
      expect((await behind.estimateForwardCost('sol', 'default')).networkFee).toBe(5000n);
      noFeeMethod = false;
      for (const code of [503, 429]) {
        status = code;
        const e = await behind.head().catch((x: unknown) => x);
        expect(e).toBeInstanceOf(HttpStatusError);
        expect(e).toBeInstanceOf(NodeUnavailableError);
        expect((e as HttpStatusError).status).toBe(code);
        // The forward's readings too: a balance read that web3.js would wrap in a plain Error.
        const d = { network: 'solana', ticker: 'sol', txid: 'x', index: 0, recipient: behind.deriveAddressIn(112n), amount: 2_000_000n, blockNumber: 0n, blockHash: '' };
        await expect(behind.prepareForward({ deposit: d, derivationIndex: 112n, addressOut: fresh(), priority: 'default' })).rejects.toBeInstanceOf(NodeUnavailableError);
      }
    } finally {
      await behind.close();
      await new Promise((r) => proxy.close(r));
    }
    // A port that was just free: nothing listens there.
    const gone = http.createServer();
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', () => r()));
    const port = (gone.address() as AddressInfo).port;
    await new Promise((r) => gone.close(r));
    const closed = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: `http://127.0.0.1:${port}`, seed, tokens: {} });
    const e = await closed.head().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RpcTransportError);
    expect((e as RpcTransportError).code).toBe('ECONNREFUSED');
    await closed.close();
  });
});

describe('through the forward activity, on PostgreSQL', () => {
  const treasury = fresh();
  const acts = () =>
    createDepositActivities({
      db: database.db, withLock: database.withLock, adapter: async (network) => (network === 'solana' ? adapter : Promise.reject(new Error(network))),
      prices, feePolicy: { domainOverrides: {}, tiers: [...STANDARD_TIERS] }, treasuryAddress: () => treasury,
    });

  async function payment(chain: LiveChain, index: bigint, amount: bigint, addressOut: string): Promise<{ uuid: string; d: ObservedDeposit }> {
    const d = await depositTo(chain, index, amount);
    const [config] = await database.db
      .insert(paymentConfigs)
      .values({
        ...callbackColumns(`https://shop.example/sol/${index}`), ticker: chain.ticker, family: 'sol', addressIn: d.recipient, addressOut,
        derivationIndex: index, notifyPending: false, notifyConfirmations: 1, post: 0, json: 0, convert: 0, priority: 'default',
      })
      .returning();
    const { row } = await recordDeposit(database.db, {
      configId: config.id, ticker: chain.ticker, network: 'solana', depositKey: `deposit:solana:${d.txid}:${d.index}`, txidIn: d.txid, vout: null,
      blockNumber: d.blockNumber, blockHash: d.blockHash, valueBase: d.amount, dueHeight: d.blockNumber,
    });
    // Judged as the deposit's evaluation judges it: the standard fee of a new host, chosen once and stored.
    await storeFeePercent(database.db, row.uuid, '1.00');
    return { uuid: row.uuid, d };
  }

  async function confirmed(uuid: string) {
    const a = acts();
    await waitFor(async () => (await a.forwardFate(uuid)).status === 'confirmed', 30_000, 'forward confirmed');
    return a.confirmedSnapshot(uuid);
  }

  test('SPL: rent is withheld only by the forward that creates the merchant token account; value = forwarded + fee', async () => {
    const out = fresh();
    const price = (await priceOfNativeInAsset(prices, ASSETS.sol_usdc))!;
    const amount = 7_000_000n;
    const withheld: bigint[] = [];
    let forwardedTotal = 0n;
    for (const index of [121n, 122n]) {
      const { uuid } = await payment(spl, index, amount, out);
      const payerBefore = await lamports(feePayer);
      await acts().recordProcessing(uuid);
      const sent = await acts().forward(uuid);
      const snap = await confirmed(uuid);
      const [row] = await database.db.select().from(payments).where(eq(payments.uuid, uuid));
      const plan = JSON.parse(row.forwardRaw!) as { forwarded: string; sponsorCost: string; rent: string; txidOut: string };
      expect(plan.txidOut).toBe(sent.txidOut);
      const sponsorCost = BigInt(plan.sponsorCost);
      // Counted on chain: the fee payer paid exactly the plan's sponsor cost (two signatures, the new account's rent).
      expect(await lamports(feePayer)).toBe(payerBefore - sponsorCost);
      const fee = percentOf(amount, row.feePercent!) + convertUnits(sponsorCost, 9, 6, price);
      expect(BigInt(plan.forwarded)).toBe(amount - fee);
      expect(BigInt(row.feeBase!)).toBe(fee);
      expect(BigInt(row.forwardedBase!) + BigInt(row.feeBase!)).toBe(amount);
      expect(snap.fee_coin).toBeDefined();
      withheld.push(sponsorCost);
      forwardedTotal += BigInt(plan.forwarded);
      expect(await spl.balanceOf(out)).toBe(forwardedTotal);
    }
    const rent = BigInt(await node.connection.getMinimumBalanceForRentExemption(165));
    expect(withheld).toEqual([10_000n + rent, 10_000n]);
  });

  test('a forward whose blockhash expired before it was ever sent is discarded on evidence, signed again with a fresh blockhash, and lands', async () => {
    const out = fresh();
    const amount = 10_000_000n;
    const { uuid, d } = await payment(sol, 131n, amount, out);
    // Signed and stored as the activity stores it, then lost before its broadcast (a worker gone).
    const stale = await adapter.prepareForward({ deposit: d, derivationIndex: 131n, addressOut: out, priority: 'default', commission: percentOf(amount, '1.00'), treasuryAddress: treasury });
    expect(await storeForwardOnce(database.db, uuid, planToJson(stale), stale.txidOut, { network: 'solana', source: d.recipient })).toBe(true);
    await waitFor(async () => BigInt(await node.connection.getBlockHeight('finalized')) > BigInt(stale.lastValidBlockHeight!), 90_000, 'blockhash expired in finalized history');
    const a = acts();
    const first = await a.forwardFate(uuid);
    expect(first).toMatchObject({ status: 'replaceable', txidOut: stale.txidOut });
    await sol.mine(2);
    const second = await a.forwardFate(uuid);
    expect(second.status).toBe('replaceable');
    expect(BigInt((second as { observedAt: string }).observedAt)).toBeGreaterThan(BigInt((first as { observedAt: string }).observedAt));
    expect(await a.discardForward(uuid, stale.txidOut)).toBe(true);
    const again = await a.forward(uuid);
    expect(again.txidOut).not.toBe(stale.txidOut);
    await confirmed(uuid);
    const [row] = await database.db.select().from(payments).where(eq(payments.uuid, uuid));
    expect(BigInt(row.forwardedBase!) + BigInt(row.feeBase!)).toBe(amount);
    expect(await lamports(out)).toBe(BigInt(row.forwardedBase!));
    expect(await lamports(d.recipient)).toBe(0n);
    // The stale bytes never landed: one payout.
    expect((await node.connection.getSignatureStatuses([stale.txidOut], { searchTransactionHistory: true })).value[0]).toBeNull();
  });
});

describe('priority fee', () => {
  test('the recent price for the forward\'s accounts, capped by the operator\'s setting, in the plan\'s fee and the estimate', async () => {
    const price = 50_000n;
    const index = 141n;
    const to = adapter.deriveAddressIn(index);
    const customer = Keypair.fromSecretKey(Uint8Array.from(node.customerSecret));
    // A customer who paid a priority fee to reach address_in: the cluster's recent prices for it are non-zero.
    await sendAndPoll(node.connection, [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: price }), SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: new PublicKey(to), lamports: 2_000_000_000 })], [customer]);
    const d = { network: 'solana', ticker: 'sol', txid: 'unused', index: 1, recipient: to, amount: 2_000_000_000n, blockNumber: 0n, blockHash: '' };
    const uncapped = await adapter.prepareForward({ deposit: d, derivationIndex: index, addressOut: fresh(), priority: 'default' });
    expect(budgetOf(uncapped)).toEqual({ units: SOL_FORWARD_UNITS, microLamports: price });
    expect(uncapped.networkFee).toBe(5000n + (BigInt(SOL_FORWARD_UNITS) * price + 999_999n) / 1_000_000n);
    expect(uncapped.forwarded + uncapped.networkFee).toBe(d.amount);
    expect((await adapter.estimateForwardCost('sol', 'default')).networkFee).toBe(uncapped.networkFee);
    const rent = BigInt(await node.connection.getMinimumBalanceForRentExemption(165));
    expect((await adapter.estimateForwardCost('sol_usdc', 'default')).sponsorCost).toBeGreaterThan(10_000n + rent);

    const capped = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: node.rpcUrl, seed, tokens: {}, priorityFeeMax: 7_000n });
    try {
      const plan = await capped.prepareForward({ deposit: d, derivationIndex: index, addressOut: fresh(), priority: 'default' });
      expect(budgetOf(plan).microLamports).toBe(7_000n);
      expect(plan.networkFee).toBe(5000n + 9n); // 1,200 units × 7,000 µlamports = 8.4 lamports, rounded up
    } finally {
      await capped.close();
    }
  });
});
