/**
 * The API's derivation of deposit addresses from an xpub (what keeps derived_addresses stocked ahead of
 * creates, on the API's derivation thread): CPU per address of xpubDeriver against bip32's own derive on the
 * same native point arithmetic and ethers' keccak and checksum (the derivation before src/addresses/public-child.ts),
 * interleaved in one process, and the ratio. Both are checked against watchOnlyAddressIn first. Keys are made
 * at run time.
 *
 *   npx tsx bench/derive.ts                  (3 rounds of 4,000 addresses per network)
 *   npx tsx bench/derive.ts --rounds 5 --count 2000
 */
import * as bip39 from 'bip39';
import { parseArgs } from 'node:util';
import { BIP32Factory } from 'bip32';
import { dataSlice, getAddress, keccak256 } from 'ethers';
import { HdSeed } from '../src/chains/keys';
import { keccakReady } from '../src/addresses/public-child';
import { pointCompress, publicDerivationEcc } from '../src/chains/secp256k1';
import { utxoAddressOfPubkey } from '../src/chains/utxo/address';
import { utxoNetwork } from '../src/chains/utxo/networks';
import { exportPublicKeys, watchOnlyAddressIn } from '../src/addresses/watch-only';
import { xpubDeriver } from '../src/addresses/derived-addresses';
import { stats } from './pipeline/report';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, count: { type: 'string', default: '4000' } } });
const ROUNDS = Number(flags.rounds);
const COUNT = Number(flags.count);

const keys = exportPublicKeys(HdSeed.fromMnemonic(bip39.generateMnemonic(256)));

/** bip32's derive of the external chain's children, its node parsed and derived once. */
function bip32Deriver(network: string): (i: bigint) => string {
  const external = BIP32Factory(publicDerivationEcc).fromBase58(keys.xpubs[network]).derive(0);
  return (i) => {
    const key = Uint8Array.from(external.derive(Number(i)).publicKey);
    if (network === 'ethereum') return getAddress(dataSlice(keccak256(pointCompress(key, false).subarray(1)), 12));
    return utxoAddressOfPubkey(utxoNetwork(network, 'mainnet'), key);
  };
}

/** CPU microseconds per address of `derive` over COUNT indexes from `start`. */
function timed(derive: (i: bigint) => string, start: bigint): number {
  const t0 = process.cpuUsage();
  for (let k = 0n; k < BigInt(COUNT); k++) derive(start + k);
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / COUNT;
}

async function main(): Promise<void> {
  // As on the derivation thread, whose runs come after the module's WebAssembly keccak is ready.
  await keccakReady;
  for (const network of ['ethereum', 'litecoin', 'bitcoincash']) {
    const lean = xpubDeriver(keys, network, 'mainnet');
    const reference = bip32Deriver(network);
    // The same addresses, or the figures mean nothing.
    for (const i of [0n, 1n, 99n]) {
      const want = watchOnlyAddressIn(keys, network, 'mainnet', i);
      if (lean(i) !== want || reference(i) !== want) throw new Error(`${network}: a derivation disagrees with watchOnlyAddressIn at ${i}`);
    }
    const times = { lean: [] as number[], reference: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const start = BigInt(round * COUNT);
      // Alternating first, so neither always runs on a warmer or a colder process.
      const order = round % 2 === 0 ? (['lean', 'reference'] as const) : (['reference', 'lean'] as const);
      for (const which of order) times[which].push(timed(which === 'lean' ? lean : reference, start));
    }
    const a = stats(times.lean)!.p50;
    const b = stats(times.reference)!.p50;
    console.log(`${network.padEnd(12)} xpubDeriver ${a.toFixed(1)} µs CPU/address, bip32 derive ${b.toFixed(1)}: ratio ${(a / b).toFixed(2)}  (rounds: ${times.lean.map((x) => x.toFixed(0)).join(' ')} / ${times.reference.map((x) => x.toFixed(0)).join(' ')})`);
  }
}

void main();
