import { Contract, JsonRpcProvider, Network, Wallet, zeroPadValue } from 'ethers';
import { createAssociatedTokenAccountIdempotentInstruction, createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, Keypair, PublicKey, SystemProgram, Transaction, type TransactionInstruction } from '@solana/web3.js';
import type { DevnetState } from '../../devnet';
import { jsonRpc } from '../../src/chains/json-rpc';
import { waitForSignature } from '../../devnet/surfnet';
import { ERC20, TRANSFER_TOPIC } from '../../src/chains/evm/erc20';
import { BitcoinRpc, fromSats, toSats } from '../../src/chains/utxo/rpc';
import { ASSETS } from '../../src/domain/assets';
import { deployPayer } from '../helpers/payer-contracts';

/**
 * The drill's customer, miner and auditor on the real node URLs (never through the hostile proxies):
 * pays groups of deposits to one address (in one block where the chain lets it), and counts on chain
 * what left each address_in and what reached each address_out.
 */
export interface Deposit {
  ticker: string;
  txid: string;
  /** UTXO output index; undefined on account chains. */
  vout?: number;
  amount: bigint;
}

export type DrillChains = Awaited<ReturnType<typeof drillChains>>;

interface SolTx {
  meta: { err: unknown } | null;
  transaction: { message: { accountKeys: Array<string | { pubkey: string; signer: boolean }>; header: { numRequiredSignatures: number } } };
}

/** One at a time per key: the customer's nonce on Ethereum is shared by ETH and token payments. */
function serial() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.catch(() => undefined).then(fn);
    tail = run;
    return run;
  };
}

export async function drillChains(state: DevnetState) {
  const eth = state.ethereum!;
  const net = Network.from(BigInt(eth.chainId));
  const provider = new JsonRpcProvider(eth.rpcUrl, net, { staticNetwork: net, cacheTimeout: -1 });
  const customer = new Wallet(eth.customerKey, provider);
  const token = new Contract(eth.tokens.erc20_usdt, ERC20, customer);
  // web3.js passes on only `instanceof Error` failures; under jest, fetch's errors come from another realm.
  const fetchHere: typeof fetch = (input, init) => fetch(input, init).catch((e: unknown) => Promise.reject(new Error(String(e))));
  const sol = new Connection(state.solana!.rpcUrl, { commitment: 'confirmed', disableRetryOnRateLimit: true, fetch: fetchHere });
  const payer = Keypair.fromSecretKey(Uint8Array.from(state.solana!.customerSecret));
  const mint = new PublicKey(state.solana!.tokens.sol_usdc);
  const ltc = new BitcoinRpc(state.litecoin!.rpcUrl);
  const ltcWallet = new BitcoinRpc(state.litecoin!.walletUrl);
  const merchantWalletUrl = state.litecoin!.rpcUrl.replace(/\/$/, '') + '/wallet/merchant';
  await ltc.call('createwallet', ['merchant']).catch(() => ltc.call('loadwallet', ['merchant']).catch(() => undefined));
  const merchant = new BitcoinRpc(merchantWalletUrl);
  const ethLock = serial();
  const ltcStart = await ltc.call<number>('getblockcount');

  async function payEvm(ticker: string, to: string, amounts: bigint[]): Promise<Deposit[]> {
    const txs = await ethLock(async () => {
      let nonce = await provider.getTransactionCount(customer.address, 'pending');
      const sent = [];
      // Sent back to back with consecutive nonces: anvil (1 s blocks) mines most groups in one block.
      for (const amount of amounts) {
        sent.push(
          ticker === 'eth'
            ? await customer.sendTransaction({ to, value: amount, nonce: nonce++ })
            : await token.getFunction('transfer')(to, amount, { nonce: nonce++ }),
        );
      }
      return sent;
    });
    for (const t of txs) await t.wait(1, 120_000);
    return txs.map((t, i) => ({ ticker, txid: t.hash as string, amount: amounts[i] }));
  }

  let payerContract: Contract | undefined;

  /** ETH sent to `to` by a contract (an internal call of the customer's transaction to a forwarder). */
  async function payEthByContract(to: string, amount: bigint): Promise<Deposit> {
    const tx = await ethLock(async () => {
      payerContract ??= await deployPayer(customer);
      return (await payerContract.getFunction('forward')(to, { value: amount })) as { hash: string; wait(n: number, ms: number): Promise<unknown> };
    });
    await tx.wait(1, 120_000);
    return { ticker: 'eth', txid: tx.hash, amount };
  }

  async function paySol(ticker: string, to: string, amounts: bigint[]): Promise<Deposit[]> {
    const owner = new PublicKey(to);
    const latest = await sol.getLatestBlockhash('confirmed');
    const sigs: string[] = [];
    // Same blockhash, sent together: they land in the same slot or neighbours.
    for (const [i, amount] of amounts.entries()) {
      let ixs: TransactionInstruction[];
      if (ticker === 'sol') {
        ixs = [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: owner, lamports: amount + BigInt(i) })];
      } else {
        const ata = getAssociatedTokenAddressSync(mint, owner);
        ixs = [
          createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, owner, mint),
          createTransferCheckedInstruction(getAssociatedTokenAddressSync(mint, payer.publicKey), mint, ata, payer.publicKey, amount + BigInt(i), 6),
        ];
      }
      const tx = new Transaction({ feePayer: payer.publicKey, ...latest }).add(...ixs);
      tx.sign(payer);
      sigs.push(await sol.sendRawTransaction(tx.serialize(), { preflightCommitment: 'confirmed' }));
    }
    for (const s of sigs) await waitForSignature(sol, s, 60_000);
    return sigs.map((txid, i) => ({ ticker, txid, amount: amounts[i] + BigInt(i) }));
  }

  async function payLtc(to: string, amounts: bigint[]): Promise<Deposit[]> {
    const out: Deposit[] = [];
    for (const amount of amounts) {
      const txid = await ltcWallet.call<string>('sendtoaddress', [to, fromSats(amount)]);
      const tx = await ltc.call<{ vout: { n: number; value: string; scriptPubKey: { address?: string; addresses?: string[] } }[] }>('getrawtransaction', [txid, true]);
      // Older Core versions (Debian's litecoind) list `addresses`, newer ones `address`.
      const v = tx.vout.find((o) => (o.scriptPubKey.address ?? o.scriptPubKey.addresses?.[0]) === to && toSats(o.value) === amount);
      if (!v) throw new Error(`ltc payment ${txid}: no output to ${to}`);
      out.push({ ticker: 'ltc', txid, vout: v.n, amount });
    }
    return out;
  }

  /** Every outpoint spent since the drill began (best chain and mempool) → the transactions spending it; read once. */
  let spends: Promise<Map<string, Set<string>>> | undefined;
  const allLtcSpends = () =>
    (spends ??= (async () => {
      const map = new Map<string, Set<string>>();
      const note = (tx: { txid: string; vin: { txid?: string; vout?: number }[] }) => {
        for (const i of tx.vin) {
          if (!i.txid) continue;
          const op = `${i.txid}:${i.vout}`;
          map.set(op, (map.get(op) ?? new Set<string>()).add(tx.txid));
        }
      };
      const tip = await ltc.call<number>('getblockcount');
      for (let h = ltcStart; h <= tip; h++) {
        const block = await ltc.call<{ tx: { txid: string; vin: { txid?: string; vout?: number }[] }[] }>('getblock', [await ltc.call<string>('getblockhash', [h]), 2]);
        block.tx.forEach(note);
      }
      for (const txid of await ltc.call<string[]>('getrawmempool')) {
        note(await ltc.call<{ txid: string; vin: { txid?: string; vout?: number }[] }>('getrawtransaction', [txid, true]));
      }
      return map;
    })());

  /**
   * Successful transactions that address_in signed: every forward out of a Solana address_in needs its
   * signature. Plain JSON-RPC (bounded fetches), not web3.js, so that a slow answer is an error, not a hang.
   */
  async function solSignedBy(address: string): Promise<number> {
    const rpc = state.solana!.rpcUrl;
    const sigs = await jsonRpc<{ signature: string; err: unknown }[]>(rpc, 'getSignaturesForAddress', [address, { limit: 1000, commitment: 'confirmed' }]);
    let n = 0;
    for (const s of sigs) {
      if (s.err) continue;
      const tx = await jsonRpc<SolTx | null>(rpc, 'getTransaction', [s.signature, { encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]);
      if (!tx || tx.meta?.err) continue;
      const { accountKeys, header } = tx.transaction.message;
      // surfnet may answer keys in the parsed shape ({ pubkey, signer }) whatever the encoding asked for.
      const signed = accountKeys.some((k, i) => (typeof k === 'string' ? k === address && i < header.numRequiredSignatures : k.pubkey === address && k.signer));
      if (signed) n++;
    }
    return n;
  }

  return {
    async payoutAddress(ticker: string): Promise<string> {
      const net = ASSETS[ticker].network;
      if (net === 'ethereum') return Wallet.createRandom().address;
      if (net === 'solana') return Keypair.generate().publicKey.toBase58();
      return merchant.call<string>('getnewaddress', ['', 'bech32']);
    },
    pay(ticker: string, to: string, amounts: bigint[]): Promise<Deposit[]> {
      const net = ASSETS[ticker].network;
      if (net === 'ethereum') return payEvm(ticker, to, amounts);
      if (net === 'solana') return paySol(ticker, to, amounts);
      return payLtc(to, amounts);
    },
    payEthByContract,
    /** How many of these Solana signatures are on chain (any status), asked of the real node. */
    async solLanded(signatures: string[]): Promise<number> {
      if (signatures.length === 0) return 0;
      const res = await jsonRpc<{ value: unknown[] }>(state.solana!.rpcUrl, 'getSignatureStatuses', [signatures, { searchTransactionHistory: true }]);
      return res.value.filter((v) => v !== null).length;
    },
    async mineLtc(blocks: number): Promise<void> {
      await ltc.call('generatetoaddress', [blocks, state.litecoin!.minerAddress]);
    },
    /**
     * Forward transfers out of each address_in, counted on chain: EVM native by the account's nonce,
     * ERC-20 by Transfer logs from it, Solana by successful transactions it signed, LTC by the
     * transactions spending its deposit outpoints.
     */
    async outgoing(ticker: string, addressIn: string, deposits: Deposit[]): Promise<number> {
      if (ticker === 'eth') return provider.getTransactionCount(addressIn, 'latest');
      if (ticker === 'erc20_usdt') {
        const logs = await provider.getLogs({ address: eth.tokens.erc20_usdt, topics: [TRANSFER_TOPIC, zeroPadValue(addressIn, 32)], fromBlock: 0, toBlock: 'latest' });
        return new Set(logs.map((l) => `${l.transactionHash}:${l.index}`)).size;
      }
      if (ticker === 'sol' || ticker === 'sol_usdc') return solSignedBy(addressIn);
      const all = await allLtcSpends();
      return new Set(deposits.flatMap((d) => [...(all.get(`${d.txid}:${d.vout}`) ?? [])])).size;
    },
    async balance(ticker: string, address: string): Promise<bigint> {
      if (ticker === 'eth') return provider.getBalance(address);
      if (ticker === 'erc20_usdt') return BigInt(await new Contract(eth.tokens.erc20_usdt, ERC20, provider).getFunction('balanceOf')(address));
      if (ticker === 'sol') return BigInt(await sol.getBalance(new PublicKey(address), 'confirmed'));
      if (ticker === 'sol_usdc') {
        const ata = getAssociatedTokenAddressSync(mint, new PublicKey(address));
        const info = await sol.getTokenAccountBalance(ata, 'confirmed').catch(() => undefined);
        return info ? BigInt(info.value.amount) : 0n;
      }
      return toSats(String(await merchant.call<string>('getreceivedbyaddress', [address, 0])));
    },
    close() {
      provider.destroy();
      (sol as unknown as { _rpcWebSocket?: { close(): void } })._rpcWebSocket?.close();
    },
  };
}
