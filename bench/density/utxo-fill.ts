/**
 * Bitcoin regtest blocks at mainnet's density (issue 57): a Core node's wallet (Bitcoin Knots, as the devnet
 * starts it) fans its coins out into one output per transaction to come, then spends each of them in a
 * transaction of its own, one input and two outputs to addresses nobody watches (random 20-byte hashes, P2WPKH),
 * as most of mainnet's transactions are; the block mined after each round holds `txsPerBlock` of them.
 */
import { randomBytes } from 'node:crypto';
import { payments } from 'bitcoinjs-lib';
import { utxoNetwork } from '../../src/chains/utxo/networks';
import { BitcoinRpc } from '../../src/chains/utxo/rpc';

/** An address nobody holds the key of: a random P2WPKH hash on regtest. */
export function randomBitcoinAddress(): string {
  return payments.p2wpkh({ hash: randomBytes(20), network: utxoNetwork('bitcoin', 'regtest') }).address!;
}

/** `fn` over the items with `width` calls under way at once. */
async function each<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

export async function fillBitcoin(o: { rpcUrl: string; walletUrl: string; minerAddress: string }, blocks: number, txsPerBlock: number): Promise<{ from: number; to: number }> {
  const node = new BitcoinRpc(o.rpcUrl, 120_000);
  const wallet = new BitcoinRpc(o.walletUrl, 120_000);
  // Coins enough for every fan-out (each mature coinbase pays one batch of 500 outputs of 0.02).
  const batches = Math.ceil((blocks * txsPerBlock) / 500);
  await node.call('generatetoaddress', [batches + 10, o.minerAddress]);
  await node.call('generatetoaddress', [100, randomBitcoinAddress()]);
  const coins: Array<{ txid: string; vout: number }> = [];
  for (let b = 0; b < batches; b++) {
    const outs: Record<string, number> = {};
    const mine: string[] = [];
    for (let i = 0; i < 500; i++) mine.push(await wallet.call<string>('getnewaddress', ['', 'bech32']));
    for (const a of mine) outs[a] = 0.02;
    const txid = await wallet.call<string>('sendmany', ['', outs]);
    const tx = await wallet.call<{ details: Array<{ address: string; vout: number; category: string }> }>('gettransaction', [txid]);
    for (const d of tx.details) if (d.category === 'receive' && d.address in outs) coins.push({ txid, vout: d.vout });
  }
  await node.call('generatetoaddress', [1, randomBitcoinAddress()]);
  const from = await node.call<number>('getblockcount');
  for (let b = 0; b < blocks; b++) {
    const mine = coins.splice(0, txsPerBlock);
    await each(mine, 8, async (c) => {
      const raw = await node.call<string>('createrawtransaction', [[c], { [randomBitcoinAddress()]: 0.012, [randomBitcoinAddress()]: 0.0079 }]);
      const signed = await wallet.call<{ hex: string; complete: boolean }>('signrawtransactionwithwallet', [raw]);
      await node.call('sendrawtransaction', [signed.hex]);
    });
    await node.call('generatetoaddress', [1, randomBitcoinAddress()]);
  }
  return { from, to: await node.call<number>('getblockcount') };
}
