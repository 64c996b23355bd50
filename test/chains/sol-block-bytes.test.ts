/**
 * The Solana watcher's reading of a getBlock answer's bytes (src/chains/sol/block-bytes.ts) against
 * JSON.parse of the same answer: the block's hash, the transactions' places and the addresses they name,
 * with escaped quotes and braces inside strings, white space between tokens, and answers that hold no block.
 */
import { Keypair } from '@solana/web3.js';
import { outlineBlock, transactionsNaming, watchedNamed } from '../../src/chains/sol/block-bytes';
import { WatchedBytes } from '../../src/chains/sol/watched-bytes';
import { scannedWatchedBlock } from '../../src/chains/sol/scan';

const key = () => Keypair.generate().publicKey.toBase58();

function answer(txs: unknown[], indent?: number): Buffer {
  const result = { previousBlockhash: key(), blockhash: key(), parentSlot: 9, transactions: txs, blockTime: 1, blockHeight: 10 };
  return Buffer.from(JSON.stringify({ jsonrpc: '2.0', result, id: 1 }, null, indent));
}

function tx(keys: string[], owner: string | null, err: unknown = null) {
  return {
    transaction: { accountKeys: keys.map((pubkey, i) => ({ pubkey, signer: i === 0, source: 'transaction', writable: true })), signatures: [key() + key()] },
    meta: {
      err,
      preBalances: keys.map(() => 1_000_000),
      postBalances: keys.map((_, i) => (i === 1 ? 3_000_000 : 1_000_000)),
      preTokenBalances: [],
      postTokenBalances: owner ? [{ accountIndex: 1, mint: key(), owner, programId: key(), uiTokenAmount: { amount: '5', decimals: 0 } }] : [],
      // A string with what a naive reading would take for structure or for its end.
      logMessages: ['say "}]{[" and \\"' + key() + '\\" here'],
    },
    version: 0,
  };
}

test('the outline finds the hash, each transaction and the watched addresses each names, as JSON.parse reads them', () => {
  const payer = key();
  const [a, b, c, owner] = [key(), key(), key(), key()];
  const txs = [tx([payer, a], null), tx([payer, b, c], owner, { InstructionError: [0, { Custom: 1 }] }), tx([payer, a, c], null)];
  for (const indent of [undefined, 2]) {
    const bytes = answer(txs, indent);
    const parsed = JSON.parse(bytes.toString()).result;
    const o = outlineBlock(bytes, watching(payer, a, owner, key()));
    expect(o.blockhash).toBe(parsed.blockhash);
    expect(o.txStart).toHaveLength(3);
    o.txStart.forEach((s, t) => expect(JSON.parse(bytes.toString('utf8', s, o.txEnd[t]))).toEqual(parsed.transactions[t]));
    expect(o.addresses.get(payer)).toEqual([0, 1, 2]);
    expect(o.addresses.get(a)).toEqual([0, 2]);
    expect(o.addresses.get(owner)).toEqual([1]);
    expect([...o.addresses.keys()].sort()).toEqual([payer, a, owner].sort());
    expect(outlineBlock(bytes).addresses.size).toBe(0);
    expect(transactionsNaming(bytes, outlineBlock(bytes), [c, owner])).toEqual([1, 2]);
  }
});

function watching(...addresses: string[]): WatchedBytes {
  const w = new WatchedBytes();
  for (const a of addresses) w.add(a);
  return w;
}

test('watched named addresses: account keys and token owners of compact JSON; another form is left to the outline', () => {
  const [payer, a, owner, stranger] = [key(), key(), key(), key()];
  const compact = answer([tx([payer, a], owner)]);
  const named = watchedNamed(compact, watching(payer, a, owner, stranger))!;
  expect(named.blockhash).toBe(JSON.parse(compact.toString()).result.blockhash);
  expect(new Set(named.addresses)).toEqual(new Set([payer, a, owner]));
  expect(watchedNamed(compact, watching(stranger))!.addresses).toEqual([]);
  expect(watchedNamed(compact, watching())).toEqual({ blockhash: named.blockhash, addresses: [] });
  expect(watchedNamed(answer([tx([payer, a], owner)], 2), watching(a))).toBeNull();
});

test('the watched table tells apart thousands of addresses, and a prefix or an extension of one is not it', () => {
  const all = Array.from({ length: 5000 }, key);
  const w = watching(...all.slice(0, 2500));
  const probe = (a: string) => {
    const b = Buffer.from(`"${a}"`, 'latin1');
    return w.find(b, 1);
  };
  expect(all.slice(0, 2500).every((a) => probe(a) === a)).toBe(true);
  expect(all.slice(2500).some((a) => probe(a) !== undefined)).toBe(false);
  expect(probe(all[0].slice(0, -1))).toBeUndefined();
  expect(probe(all[0] + '1')).toBeUndefined();
  expect(all.slice(0, 2500).every((a) => w.has(a))).toBe(true);
  expect(all.slice(2500).some((a) => w.has(a))).toBe(false);
  expect([all[0].slice(0, -1), all[0] + '1', all[0].repeat(2), 'short'].some((a) => w.has(a))).toBe(false);
  expect(w.size).toBe(2500);
  w.add(all[0]);
  expect(w.size).toBe(2500);
});

test('a block naming no watched address is read for its hash alone; one naming one has that transaction parsed, in either form', () => {
  const ctx = { network: 'solana', nativeTicker: 'sol', mints: new Map<string, string>() };
  const [payer, watched, other] = [key(), key(), key()];
  const txs = [tx([payer, other], null), tx([payer, watched], null)];
  for (const indent of [undefined, 2]) {
    const bytes = answer(txs, indent);
    const none = scannedWatchedBlock(bytes, 5, ctx, watching(key()));
    expect(none).toMatchObject({ height: 5n, hash: JSON.parse(bytes.toString()).result.blockhash, deposits: [], txids: [] });
    const one = scannedWatchedBlock(bytes, 5, ctx, watching(watched));
    expect(one.txids).toEqual([txs[1].transaction.signatures[0]]);
    expect(one.deposits.map((d) => [d.recipient, d.amount])).toEqual([[watched, 2_000_000n]]);
  }
});
