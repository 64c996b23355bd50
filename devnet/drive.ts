import { Contract, JsonRpcProvider, Network, Wallet } from 'ethers';
import { createAssociatedTokenAccountIdempotentInstruction, createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, Keypair, PublicKey, SystemProgram } from '@solana/web3.js';
import { ASSETS } from '../src/domain/assets';
import { parseUnits } from '../src/domain/money';
import { ERC20 } from '../src/chains/evm/erc20';
import type { DevnetState } from './index';
import { jsonRpc } from '../src/chains/json-rpc';
import { sendAndPoll } from './surfnet';
import { utxoDriver, type UtxoDriver } from './utxo-drive';

function assetOf(ticker: string) {
  const a = ASSETS[ticker];
  if (!a) throw new Error(`unknown ticker ${ticker}`);
  return a;
}

function need<T>(v: T | undefined, what: string): T {
  if (!v) throw new Error(`the ${what} devnet is not running`);
  return v;
}

const UTXO_NETWORKS = ['litecoin', 'bitcoin', 'bitcoincash'] as const;
type UtxoNet = (typeof UTXO_NETWORKS)[number];
const isUtxo = (network: string): network is UtxoNet => (UTXO_NETWORKS as readonly string[]).includes(network);

/** The driver of a running local UTXO chain (litecoind, Bitcoin Knots or btcd, bchd). */
export function devnetUtxo(state: DevnetState, network: string): UtxoDriver {
  if (!isUtxo(network)) throw new Error(`${network} is not a local UTXO chain`);
  return utxoDriver(network, need(state[network], network));
}

/** A fresh payout address of the ticker's local chain for trying a payment (nobody here needs its key). */
export async function devnetAddress(state: DevnetState, ticker: string): Promise<string> {
  const asset = assetOf(ticker);
  if (asset.network === 'ethereum') return Wallet.createRandom().address;
  if (asset.network === 'solana') return Keypair.generate().publicKey.toBase58();
  return devnetUtxo(state, asset.network).newAddress();
}

/** The customer pays `amount` (decimal text in whole coins) of `ticker` to `to`; resolves to the txid. */
export async function devnetPay(state: DevnetState, ticker: string, to: string, amount: string): Promise<string> {
  const asset = assetOf(ticker);
  const units = parseUnits(amount, asset.decimals);
  if (asset.network === 'ethereum') {
    const eth = need(state.ethereum, 'ethereum');
    const provider = new JsonRpcProvider(eth.rpcUrl, Network.from(BigInt(eth.chainId)), { staticNetwork: true, cacheTimeout: -1 });
    try {
      const customer = new Wallet(eth.customerKey, provider);
      const tx =
        asset.type === 'native'
          ? await customer.sendTransaction({ to, value: units })
          : await new Contract(need(eth.tokens[ticker], ticker), ERC20, customer).getFunction('transfer')(to, units);
      await tx.wait(1, 60_000);
      return tx.hash as string;
    } finally {
      provider.destroy();
    }
  }
  if (asset.network === 'solana') {
    const sol = need(state.solana, 'solana');
    const conn = new Connection(sol.rpcUrl, { commitment: 'confirmed' });
    const customer = Keypair.fromSecretKey(Uint8Array.from(sol.customerSecret));
    const owner = new PublicKey(to);
    if (asset.type === 'native') return sendAndPoll(conn, [SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: owner, lamports: units })], [customer]);
    const mint = new PublicKey(need(sol.tokens[ticker], ticker));
    const ata = getAssociatedTokenAddressSync(mint, owner);
    return sendAndPoll(
      conn,
      [
        createAssociatedTokenAccountIdempotentInstruction(customer.publicKey, ata, owner, mint),
        createTransferCheckedInstruction(getAssociatedTokenAddressSync(mint, customer.publicKey), mint, ata, customer.publicKey, units, asset.decimals),
      ],
      [customer],
    );
  }
  if (isUtxo(asset.network)) return devnetUtxo(state, asset.network).pay(to, units);
  throw new Error(`no devnet for ${ticker}`);
}

/** Mines `blocks` blocks on the ticker's chain (Solana: waits for that many slots); resolves to the new height. */
export async function devnetMine(state: DevnetState, ticker: string, blocks: number): Promise<bigint> {
  const asset = assetOf(ticker);
  if (asset.network === 'ethereum') {
    const eth = need(state.ethereum, 'ethereum');
    await jsonRpc(eth.rpcUrl, 'anvil_mine', [`0x${blocks.toString(16)}`]);
    return BigInt(await jsonRpc<string>(eth.rpcUrl, 'eth_blockNumber'));
  }
  if (isUtxo(asset.network)) {
    const chain = devnetUtxo(state, asset.network);
    await chain.mine(blocks);
    return BigInt(await chain.height());
  }
  if (asset.network === 'solana') {
    const sol = need(state.solana, 'solana');
    const conn = new Connection(sol.rpcUrl, { commitment: 'confirmed' });
    const target = (await conn.getSlot('confirmed')) + blocks;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const slot = await conn.getSlot('confirmed');
      if (slot >= target) return BigInt(slot);
      if (Date.now() > deadline) throw new Error(`slot ${target} not reached within 120 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`no devnet for ${ticker}`);
}
