/**
 * Solana's key work on the forward path and in the address pool's refill (src/chains/sol/ed25519.ts): CPU per
 * operation in node:crypto against the libraries it replaces, interleaved in one process, and the ratio.
 *   - keypair: an address_in's key (SLIP-10 at m/44'/501'/i'/0') and its Keypair, against ed25519-hd-key's
 *     derivePath (the Keypair is Keypair.fromSeed on both sides);
 *   - seal: the check of a signed transaction's two signatures (an SPL forward: fee payer and address_in) and
 *     its wire bytes, against Transaction.serialize(), which verifies them with noble.
 * Both sides are checked to give the same keys and bytes first. Keys are made at run time.
 *
 *   npx tsx bench/sol-keys.ts                  (3 rounds of 400 operations each)
 *   npx tsx bench/sol-keys.ts --rounds 5 --count 1000
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { derivePath } from 'ed25519-hd-key';
import { serializeVerified, slip10Ed25519 } from '../src/chains/sol/ed25519';
import { stats } from './pipeline/report';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, count: { type: 'string', default: '400' } } });
const ROUNDS = Number(flags.rounds);
const COUNT = Number(flags.count);

const seed = randomBytes(64);
const path = (i: number) => `m/44'/501'/${i}'/0'`;
const keypairs = {
  lean: (i: number) => Keypair.fromSeed(slip10Ed25519(seed, path(i))),
  reference: (i: number) => Keypair.fromSeed(derivePath(path(i), seed.toString('hex')).key),
};

const payer = Keypair.fromSeed(randomBytes(32));
const source = Keypair.fromSeed(randomBytes(32));
/** A signed transaction of two signatures, new each time (the library caches nothing across transactions). */
function signed(i: number): Transaction {
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash: new PublicKey(randomBytes(32)).toBase58(), lastValidBlockHeight: 1 }).add(
    SystemProgram.transfer({ fromPubkey: source.publicKey, toPubkey: payer.publicKey, lamports: 1000 + i }),
  );
  tx.sign(payer, source);
  return tx;
}
const seals = { lean: (tx: Transaction) => serializeVerified(tx), reference: (tx: Transaction) => tx.serialize() };

/** CPU microseconds per call of `op` on COUNT inputs made beforehand by `input`. */
function timed<T>(op: (x: T) => unknown, input: (i: number) => T, offset: number): number {
  const inputs = Array.from({ length: COUNT }, (_, k) => input(offset + k));
  const t0 = process.cpuUsage();
  for (const x of inputs) op(x);
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / COUNT;
}

function compare<T>(name: string, ops: { lean: (x: T) => unknown; reference: (x: T) => unknown }, input: (i: number) => T): void {
  const times = { lean: [] as number[], reference: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating first, so neither always runs on a warmer or a colder process.
    const order = round % 2 === 0 ? (['lean', 'reference'] as const) : (['reference', 'lean'] as const);
    for (const which of order) times[which].push(timed(ops[which], input, round * COUNT));
  }
  const a = stats(times.lean)!.p50;
  const b = stats(times.reference)!.p50;
  console.log(`${name.padEnd(8)} node:crypto ${a.toFixed(1)} µs CPU/op, libraries ${b.toFixed(1)}: ratio ${(a / b).toFixed(3)}  (rounds: ${times.lean.map((x) => x.toFixed(0)).join(' ')} / ${times.reference.map((x) => x.toFixed(0)).join(' ')})`);
}

// The same keys and bytes, or the figures mean nothing.
for (const i of [0, 1, 2 ** 31 - 1]) {
  const [a, b] = [keypairs.lean(i), keypairs.reference(i)];
  if (Buffer.compare(a.secretKey, b.secretKey) !== 0) throw new Error(`keypairs differ at ${i}`);
}
const probe = signed(0);
if (Buffer.compare(seals.lean(probe), seals.reference(probe)) !== 0) throw new Error('wire bytes differ');

compare('keypair', keypairs, (i) => i);
compare('seal', seals, signed);
