import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Contract, JsonRpcProvider, Network, Wallet, parseEther } from 'ethers';
import * as bip39 from 'bip39';
import { createAssociatedTokenAccountIdempotentInstruction, createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Keypair, PublicKey, SystemProgram } from '@solana/web3.js';
import type { ChainAdapter, ObservedDeposit } from '../../src/chains/adapter';
import { HdSeed } from '../../src/chains/keys';
import { EvmAdapter } from '../../src/chains/evm/adapter';
import { ERC20 } from '../../src/chains/evm/erc20';
import { UtxoAdapter } from '../../src/chains/utxo/adapter';
import { SolAdapter } from '../../src/chains/sol/adapter';
import { BitcoinRpc, fromSats, toSats } from '../../src/chains/utxo/rpc';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { litecoindAvailable, startLitecoind, type LitecoindDevnet } from '../../devnet/litecoind';
import { sendAndPoll, startSurfnet, type SurfnetDevnet } from '../../devnet/surfnet';
import { jsonRpc } from '../../src/chains/json-rpc';
import { evmGasTankKey, solFeePayerSeed } from '../../src/chains/sponsor';
import { waitFor } from './process';

/** A family's live local node, driven the way a customer and a miner would drive it. */
export interface LiveChain {
  name: string;
  ticker: string;
  amount: bigint;
  adapter: ChainAdapter;
  pay(to: string, amount: bigint): Promise<string>;
  /** Mines (or waits for) enough for the deposit's confirmations to rise. */
  advance(deposit: ObservedDeposit): Promise<void>;
  /** Makes forwards land: one more block, or slot confirmation. */
  mine(blocks: number): Promise<void>;
  freshAddressOut(): Promise<string>;
  balanceOf(address: string): Promise<bigint>;
  /** Reorganises the deposit's block away; undefined when the node cannot (surfnet). */
  reorg?: {
    checkpoint(): Promise<string>;
    undo(checkpoint: string, deposit: ObservedDeposit): Promise<void>;
    /** Gets the orphaned transaction mined again in a new block (Bitcoin Core's mempool takes it back by itself). */
    reinclude(deposit: ObservedDeposit): Promise<void>;
  };
  pids: number[];
  stop(): Promise<void>;
}

export function testSeed(): HdSeed {
  return HdSeed.fromMnemonic(bip39.generateMnemonic(256));
}

export function tmpDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function anvilChain(ticker: 'eth' | 'erc20_usdt', seed: HdSeed, node?: AnvilDevnet): Promise<LiveChain> {
  const tank = new Wallet(Buffer.from(evmGasTankKey(seed)).toString('hex'));
  const dev = node ?? (await startAnvil({ dir: tmpDir('gw-anvil-'), fund: [tank.address] }));
  const adapter = new EvmAdapter({ network: 'ethereum', mode: 'regtest', rpcUrl: dev.rpcUrl, chainId: dev.chainId, seed, tokens: dev.tokens });
  const provider = new JsonRpcProvider(dev.rpcUrl, Network.from(dev.chainId), { staticNetwork: true, cacheTimeout: -1 });
  const customer = new Wallet(dev.customerKey, provider);
  const token = new Contract(dev.tokens.erc20_usdt, ERC20, customer);
  const mine = async (n: number) => {
    await jsonRpc(dev.rpcUrl, 'anvil_mine', [`0x${n.toString(16)}`]);
  };
  let orphanedRaw = '';
  return {
    name: ticker === 'eth' ? 'anvil eth' : 'anvil test ERC-20',
    ticker,
    amount: ticker === 'eth' ? parseEther('1.5') : 25_000_000n,
    adapter,
    async pay(to, amount) {
      const tx = ticker === 'eth' ? await customer.sendTransaction({ to, value: amount }) : await token.getFunction('transfer')(to, amount);
      await tx.wait(1, 30_000);
      return tx.hash as string;
    },
    advance: () => mine(2),
    mine,
    freshAddressOut: async () => Wallet.createRandom().address,
    balanceOf: async (a) =>
      ticker === 'eth' ? provider.getBalance(a) : ((await token.getFunction('balanceOf')(a)) as bigint),
    reorg: {
      checkpoint: () => jsonRpc<string>(dev.rpcUrl, 'evm_snapshot'),
      async undo(id, deposit) {
        orphanedRaw = await jsonRpc<string>(dev.rpcUrl, 'eth_getRawTransactionByHash', [deposit.txid]);
        await jsonRpc(dev.rpcUrl, 'evm_revert', [id]);
        await mine(3); // the height comes back with other blocks
      },
      // anvil's revert forgets the transaction; the customer's same signed bytes are sent again.
      async reinclude() {
        await jsonRpc(dev.rpcUrl, 'eth_sendRawTransaction', [orphanedRaw]);
      },
    },
    pids: node ? [] : [dev.pid],
    async stop() {
      provider.destroy();
      await adapter.close();
      if (!node) await dev.stop();
    },
  };
}

export async function litecoinChain(seed: HdSeed): Promise<LiveChain> {
  const dev: LitecoindDevnet = await startLitecoind({ dir: tmpDir('gw-ltc-') });
  const adapter = new UtxoAdapter({ network: 'litecoin', mode: 'regtest', rpcUrl: dev.rpcUrl, seed });
  const rpc = new BitcoinRpc(dev.rpcUrl);
  const wallet = new BitcoinRpc(dev.walletUrl);
  // A fresh coinbase address per call: after invalidateblock an identical block (same parent, txs,
  // coinbase and second) would be the invalidated one again and be refused.
  const mine = async (n: number) => {
    await rpc.call('generatetoaddress', [n, await wallet.call<string>('getnewaddress', ['', 'bech32'])]);
  };
  return {
    name: 'litecoind regtest ltc',
    ticker: 'ltc',
    amount: 50_000_000n,
    adapter,
    pay: (to, amount) => wallet.call<string>('sendtoaddress', [to, fromSats(amount)]),
    advance: () => mine(2),
    mine,
    freshAddressOut: () => wallet.call<string>('getnewaddress', ['', 'bech32']),
    async balanceOf(address) {
      const r = await rpc.call<{ total_amount: string }>('scantxoutset', ['start', [`addr(${address})`]]);
      return toSats(r.total_amount);
    },
    reorg: {
      checkpoint: async () => '',
      async undo(_cp, deposit) {
        await rpc.call('invalidateblock', [deposit.blockHash]);
      },
      reinclude: async () => undefined,
    },
    pids: [dev.pid],
    async stop() {
      await adapter.close();
      await dev.stop();
    },
  };
}

export async function surfnetChain(ticker: 'sol' | 'sol_usdc', seed: HdSeed, node?: SurfnetDevnet): Promise<LiveChain> {
  const feePayer = Keypair.fromSeed(solFeePayerSeed(seed));
  const dev = node ?? (await startSurfnet({ fund: [feePayer.publicKey.toBase58()], slotTimeMs: 50 }));
  const adapter = new SolAdapter({ network: 'solana', mode: 'regtest', rpcUrl: dev.rpcUrl, seed, tokens: dev.tokens });
  const customer = Keypair.fromSecretKey(Uint8Array.from(dev.customerSecret));
  const mint = new PublicKey(dev.tokens.sol_usdc);
  const conn = dev.connection;
  const slotsPass = async (n: number) => {
    const start = await conn.getSlot('confirmed');
    await waitFor(async () => (await conn.getSlot('confirmed')) >= start + n, 30_000, `${n} slots`);
  };
  return {
    name: ticker === 'sol' ? 'surfnet sol' : 'surfnet SPL token',
    ticker,
    amount: ticker === 'sol' ? 2_000_000_000n : 7_000_000n,
    adapter,
    async pay(to, amount) {
      const owner = new PublicKey(to);
      if (ticker === 'sol') return sendAndPoll(conn, [SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: owner, lamports: amount })], [customer]);
      const from = getAssociatedTokenAddressSync(mint, customer.publicKey);
      const ata = getAssociatedTokenAddressSync(mint, owner);
      return sendAndPoll(
        conn,
        [
          createAssociatedTokenAccountIdempotentInstruction(customer.publicKey, ata, owner, mint),
          createTransferCheckedInstruction(from, mint, ata, customer.publicKey, amount, 6),
        ],
        [customer],
      );
    },
    // Finality: confirmations go from 0 to 1 once the slot is finalized (about 32 slots later).
    advance: (deposit) =>
      waitFor(async () => (await adapter.confirmations(deposit)).confirmations === 1, 30_000, 'finalization'),
    mine: (n) => slotsPass(n),
    freshAddressOut: async () => Keypair.generate().publicKey.toBase58(),
    async balanceOf(address) {
      const owner = new PublicKey(address);
      if (ticker === 'sol') return BigInt(await conn.getBalance(owner, 'confirmed'));
      const info = await conn.getAccountInfo(getAssociatedTokenAddressSync(mint, owner), 'confirmed');
      if (!info) return 0n;
      return BigInt((await conn.getTokenAccountBalance(getAssociatedTokenAddressSync(mint, owner), 'confirmed')).value.amount);
    },
    pids: node || dev.pid === undefined ? [] : [dev.pid],
    async stop() {
      await adapter.close();
      if (!node) await dev.stop();
    },
  };
}

/** The UTXO live node is required in tests (.ci/run installs it): a clear failure, never a skip. */
export function requiredLitecoinChain(seed: HdSeed): Promise<LiveChain> {
  if (!litecoindAvailable()) throw new Error('litecoind is not installed: apt-get install -y litecoind (.ci/run installs it)');
  return litecoinChain(seed);
}
