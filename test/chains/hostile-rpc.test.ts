import bs58 from 'bs58';
import { JsonRpcProvider, Network, Transaction as EthTransaction, Wallet, parseEther } from 'ethers';
import { Connection, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { startLitecoind, type LitecoindDevnet } from '../../devnet/litecoind';
import { jsonRpc } from '../../src/chains/json-rpc';
import { startSurfnet, waitForSignature, type SurfnetDevnet } from '../../devnet/surfnet';
import { BitcoinRpc, RpcError } from '../../src/chains/utxo/rpc';
import { NodeUnavailableError } from '../../src/chains/adapter';
import { EvmRpcProvider } from '../../src/chains/evm/provider';
import { FAULT_KINDS, startHostileRpc, type FaultKind, type HostileRpc } from '../helpers/hostile-rpc';
import { tmpDir } from '../helpers/nodes';
import { waitFor } from '../helpers/process';

/**
 * The hostile proxy in front of each real node, seen through the clients the gateway uses: ethers'
 * JsonRpcProvider (EvmRpcProvider, as the EVM adapter builds it), @solana/web3.js Connection and the project's BitcoinRpc.
 * Each fault is forced alone (probability 1) and its lie is checked against the node read directly.
 */
const only = (proxy: HostileRpc, kind: FaultKind) => {
  proxy.setProbabilities(Object.fromEntries(FAULT_KINDS.map((k) => [k, k === kind ? 1 : 0])));
  proxy.rage();
};

describe('hostile RPC in front of anvil (ethers)', () => {
  let node: AnvilDevnet;
  let proxy: HostileRpc;
  let viaProxy: JsonRpcProvider;
  let direct: JsonRpcProvider;
  let customer: Wallet;
  const net = Network.from(31337n);
  const mine = (n: number) => jsonRpc(node.rpcUrl, 'anvil_mine', [`0x${n.toString(16)}`]);
  const signedPayment = async () => customer.signTransaction(await customer.populateTransaction({ to: Wallet.createRandom().address, value: parseEther('0.01') }));

  beforeAll(async () => {
    node = await startAnvil({ dir: tmpDir('gw-hostile-anvil-') });
    proxy = await startHostileRpc({ upstream: node.rpcUrl, seed: 7, enabled: false });
    viaProxy = new EvmRpcProvider(proxy.url, net, { staticNetwork: net, cacheTimeout: -1, batchMaxCount: 1 });
    direct = new JsonRpcProvider(node.rpcUrl, net, { staticNetwork: net, cacheTimeout: -1 });
    customer = new Wallet(node.customerKey, direct);
  }, 120_000);
  afterAll(async () => {
    viaProxy?.destroy();
    direct?.destroy();
    await proxy?.close();
    await node?.stop();
  });

  it('calm, it is transparent: heads, balances, a broadcast and its receipt', async () => {
    proxy.calm();
    await mine(2);
    expect(await viaProxy.getBlockNumber()).toBe(await direct.getBlockNumber());
    expect((await viaProxy.getBlock('latest'))!.hash).toBe((await direct.getBlock('latest'))!.hash);
    const sent = await viaProxy.broadcastTransaction(await signedPayment());
    const receipt = await viaProxy.getTransactionReceipt(sent.hash);
    expect(receipt!.blockHash).toBe((await direct.getTransactionReceipt(sent.hash))!.blockHash);
    expect(proxy.stats().faults).toEqual({ staleHead: 0, drop: 0, nullReceipt: 0, broadcastError: 0 });
  });

  it('serves a stale head: eth_blockNumber and the latest block from earlier answers', async () => {
    proxy.calm();
    for (let i = 0; i < 3; i++) {
      await viaProxy.getBlockNumber();
      await viaProxy.getBlock('latest');
      await mine(1);
    }
    only(proxy, 'staleHead');
    const head = await direct.getBlockNumber();
    expect(await viaProxy.getBlockNumber()).toBeLessThan(head);
    expect((await viaProxy.getBlock('latest'))!.number).toBeLessThan(head);
    expect(proxy.stats().faults.staleHead).toBeGreaterThanOrEqual(2);
  });

  it('returns a null receipt and no transaction for a mined one', async () => {
    const tx = await customer.sendTransaction({ to: Wallet.createRandom().address, value: 1n });
    await tx.wait();
    only(proxy, 'nullReceipt');
    const before = proxy.stats().faults.nullReceipt;
    expect(await direct.getTransactionReceipt(tx.hash)).not.toBeNull();
    expect(await viaProxy.getTransactionReceipt(tx.hash)).toBeNull();
    expect(await viaProxy.getTransaction(tx.hash)).toBeNull();
    expect(proxy.stats().faults.nullReceipt - before).toBe(2);
  });

  it('alters each call of a JSON-RPC batch on its own', async () => {
    const tx = await customer.sendTransaction({ to: Wallet.createRandom().address, value: 1n });
    await tx.wait();
    only(proxy, 'nullReceipt');
    const res = await fetch(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
        { jsonrpc: '2.0', id: 2, method: 'eth_getTransactionReceipt', params: [tx.hash] },
      ]),
    });
    const answers = (await res.json()) as Array<{ id: number; result: unknown }>;
    expect(answers.find((a) => a.id === 1)!.result).toBe('0x7a69');
    expect(answers.find((a) => a.id === 2)!.result).toBeNull();
  });

  it('answers a relayed broadcast with an error, and the transaction is mined all the same', async () => {
    only(proxy, 'broadcastError');
    const raw = await signedPayment();
    await expect(viaProxy.broadcastTransaction(raw)).rejects.toThrow(/transport error/);
    const hash = EthTransaction.from(raw).hash!;
    await waitFor(async () => (await direct.getTransactionReceipt(hash)) !== null, 10_000, 'relayed transaction mined');
    expect(proxy.stats().faults.broadcastError).toBe(1);
  });

  it('drops the answer after relaying: the client sees a network failure, the node acted', async () => {
    only(proxy, 'drop');
    await expect(viaProxy.getBlockNumber()).rejects.toThrow();
    const raw = await signedPayment();
    await expect(viaProxy.broadcastTransaction(raw)).rejects.toThrow();
    const hash = EthTransaction.from(raw).hash!;
    await waitFor(async () => (await direct.getTransactionReceipt(hash)) !== null, 10_000, 'dropped broadcast mined');
    expect(proxy.stats().faults.drop).toBeGreaterThanOrEqual(2);
  });
});

describe('hostile RPC in front of surfnet (@solana/web3.js)', () => {
  let node: SurfnetDevnet;
  let proxy: HostileRpc;
  let viaProxy: Connection;
  let customer: Keypair;
  const transfer = async () => {
    const latest = await node.connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: customer.publicKey, ...latest }).add(
      SystemProgram.transfer({ fromPubkey: customer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    );
    tx.sign(customer);
    return tx;
  };

  beforeAll(async () => {
    node = await startSurfnet({ slotTimeMs: 50 });
    customer = Keypair.fromSecretKey(Uint8Array.from(node.customerSecret));
    proxy = await startHostileRpc({ upstream: node.rpcUrl, seed: 11, enabled: false });
    // web3.js reports only `instanceof Error` failures; under jest, fetch's errors come from another realm.
    const fetchHere: typeof fetch = (input, init) => fetch(input, init).catch((e: unknown) => Promise.reject(new Error(String(e))));
    viaProxy = new Connection(proxy.url, { commitment: 'confirmed', disableRetryOnRateLimit: true, fetch: fetchHere });
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
    await node?.stop();
  });

  it('calm, it is transparent: a transfer sent and seen through it', async () => {
    proxy.calm();
    const tx = await transfer();
    const sig = await viaProxy.sendRawTransaction(tx.serialize(), { preflightCommitment: 'confirmed' });
    await waitForSignature(viaProxy, sig);
    const { value } = await viaProxy.getSignatureStatuses([sig], { searchTransactionHistory: true });
    expect(value[0]?.err).toBeNull();
    expect(Math.abs((await viaProxy.getSlot('confirmed')) - (await node.connection.getSlot('confirmed')))).toBeLessThan(20);
  });

  it('serves a stale slot and block height', async () => {
    proxy.calm();
    for (let i = 0; i < 4; i++) {
      await viaProxy.getSlot('confirmed');
      await viaProxy.getBlockHeight('confirmed');
      await new Promise((r) => setTimeout(r, 300));
    }
    only(proxy, 'staleHead');
    const stale = await viaProxy.getSlot('confirmed');
    const height = await viaProxy.getBlockHeight('confirmed');
    expect(stale).toBeLessThan(await node.connection.getSlot('confirmed'));
    expect(height).toBeLessThan(await node.connection.getBlockHeight('confirmed'));
    expect(proxy.stats().faults.staleHead).toBeGreaterThanOrEqual(2);
  });

  it('reports a landed signature as unknown', async () => {
    proxy.calm();
    const tx = await transfer();
    const sig = await node.connection.sendRawTransaction(tx.serialize());
    await waitForSignature(node.connection, sig);
    only(proxy, 'nullReceipt');
    const { value } = await viaProxy.getSignatureStatuses([sig], { searchTransactionHistory: true });
    expect(value).toEqual([null]);
    expect(proxy.stats().faults.nullReceipt).toBe(1);
  });

  it('answers a relayed sendTransaction with an error, and it lands all the same', async () => {
    only(proxy, 'broadcastError');
    const tx = await transfer();
    await expect(viaProxy.sendRawTransaction(tx.serialize(), { preflightCommitment: 'confirmed' })).rejects.toThrow(/transport error/);
    const sig = bs58.encode(tx.signature!);
    await waitForSignature(node.connection, sig);
    expect(proxy.stats().faults.broadcastError).toBe(1);
  });

  it('drops the answer after relaying: the client fails, the transfer lands', async () => {
    only(proxy, 'drop');
    await expect(viaProxy.getSlot('confirmed')).rejects.toThrow();
    const tx = await transfer();
    await expect(viaProxy.sendRawTransaction(tx.serialize(), { preflightCommitment: 'confirmed' })).rejects.toThrow();
    await waitForSignature(node.connection, bs58.encode(tx.signature!));
    expect(proxy.stats().faults.drop).toBe(2);
  });

  it('swallows the first transaction a signer sends, every re-send of it too, and passes the next one on', async () => {
    proxy.calm();
    proxy.swallowFirstSend(customer.publicKey.toBase58());
    const first = await transfer();
    const sig = bs58.encode(first.signature!);
    expect(await viaProxy.sendRawTransaction(first.serialize(), { skipPreflight: true })).toBe(sig);
    expect(await viaProxy.sendRawTransaction(first.serialize(), { skipPreflight: true })).toBe(sig);
    const second = await transfer();
    await waitForSignature(node.connection, await viaProxy.sendRawTransaction(second.serialize(), { preflightCommitment: 'confirmed' }));
    expect((await node.connection.getSignatureStatuses([sig], { searchTransactionHistory: true })).value[0]).toBeNull();
    expect(proxy.stats()).toMatchObject({ swallowed: 2, swallowedSignatures: [sig] });
  });
});

describe('hostile RPC in front of litecoind (BitcoinRpc)', () => {
  let node: LitecoindDevnet;
  let proxy: HostileRpc;
  let viaProxy: BitcoinRpc;
  let direct: BitcoinRpc;
  let wallet: BitcoinRpc;
  const mine = async (n: number) => direct.call('generatetoaddress', [n, node.minerAddress]);
  /** A signed payment from the node's wallet, not yet broadcast. */
  const signedPayment = async () => {
    const to = await wallet.call<string>('getnewaddress', ['', 'bech32']);
    const funded = await wallet.call<{ hex: string }>('fundrawtransaction', [await wallet.call<string>('createrawtransaction', [[], { [to]: '0.1' }])]);
    const signed = await wallet.call<{ hex: string }>('signrawtransactionwithwallet', [funded.hex]);
    const { txid } = await direct.call<{ txid: string }>('decoderawtransaction', [signed.hex]);
    return { hex: signed.hex, txid };
  };

  beforeAll(async () => {
    node = await startLitecoind({ dir: tmpDir('gw-hostile-ltc-') });
    direct = new BitcoinRpc(node.rpcUrl);
    wallet = new BitcoinRpc(node.walletUrl);
    proxy = await startHostileRpc({ upstream: node.rpcUrl, seed: 13, enabled: false });
    viaProxy = new BitcoinRpc(proxy.url);
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
    await node?.stop();
  });

  it('calm, it is transparent, credentials and wallet path included', async () => {
    proxy.calm();
    expect(await viaProxy.call<number>('getblockcount')).toBe(await direct.call<number>('getblockcount'));
    const viaWallet = new BitcoinRpc(proxy.proxied(node.walletUrl));
    expect(await viaWallet.call<string>('getnewaddress', ['', 'bech32'])).toMatch(/^rltc1/);
    const p = await signedPayment();
    expect(await viaProxy.call<string>('sendrawtransaction', [p.hex])).toBe(p.txid);
    expect((await viaProxy.call<{ txid: string }>('getrawtransaction', [p.txid, true])).txid).toBe(p.txid);
  });

  it('serves a stale block count and best block hash', async () => {
    proxy.calm();
    for (let i = 0; i < 3; i++) {
      await viaProxy.call('getblockcount');
      await viaProxy.call('getbestblockhash');
      await mine(1);
    }
    only(proxy, 'staleHead');
    const count = await direct.call<number>('getblockcount');
    expect(await viaProxy.call<number>('getblockcount')).toBeLessThan(count);
    expect(await viaProxy.call<string>('getbestblockhash')).not.toBe(await direct.call<string>('getbestblockhash'));
  });

  it('denies a mined transaction with error -5', async () => {
    proxy.calm();
    const p = await signedPayment();
    await direct.call('sendrawtransaction', [p.hex]);
    await mine(1);
    only(proxy, 'nullReceipt');
    const err = await viaProxy.call('getrawtransaction', [p.txid, true]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).code).toBe(-5);
    expect((await direct.call<{ confirmations: number }>('getrawtransaction', [p.txid, true])).confirmations).toBe(1);
  });

  it('answers a relayed sendrawtransaction with an error; the transaction is in the mempool', async () => {
    only(proxy, 'broadcastError');
    const p = await signedPayment();
    await expect(viaProxy.call('sendrawtransaction', [p.hex])).rejects.toBeInstanceOf(RpcError);
    expect(await direct.call<string[]>('getrawmempool')).toContain(p.txid);
  });

  it('drops the answer after relaying: NodeUnavailableError, and the broadcast reached the node', async () => {
    only(proxy, 'drop');
    const p = await signedPayment();
    await expect(viaProxy.call('sendrawtransaction', [p.hex])).rejects.toBeInstanceOf(NodeUnavailableError);
    expect(await direct.call<string[]>('getrawmempool')).toContain(p.txid);
    expect(proxy.stats().faults).toMatchObject({ drop: 1, broadcastError: 1, nullReceipt: 1 });
  });

  it('refuses every broadcast on relay policy (-26) for a while, without reaching the node; testmempoolaccept agrees; then relays', async () => {
    proxy.calm();
    proxy.refuseOnPolicy('min relay fee not met', 3000);
    const p = await signedPayment();
    const err = await viaProxy.call('sendrawtransaction', [p.hex]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).code).toBe(-26);
    expect(await direct.call<string[]>('getrawmempool')).not.toContain(p.txid);
    expect(await viaProxy.call('testmempoolaccept', [[p.hex]])).toEqual([expect.objectContaining({ txid: p.txid, allowed: false, 'reject-reason': 'min relay fee not met' })]);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await viaProxy.call<string>('sendrawtransaction', [p.hex])).toBe(p.txid);
    expect(proxy.stats().policyRefusals).toBe(1);
  });
});
