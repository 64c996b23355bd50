// The API's address-derivation thread (src/addresses/derive-thread.ts): derives runs of deposit addresses from
// public material (an account xpub), never a secret, so that keeping derived_addresses stocked does not take
// turns with requests on the API's event loop.
import { parentPort } from 'node:worker_threads';
import type { ChainMode } from '../chains/config';
import { keccakReady } from '../addresses/public-child';
import { deriveRun, xpubDeriver } from '../addresses/derived-addresses';
import type { DeriveReply, DeriveRequest } from '../addresses/derive-thread';

const parent = parentPort!;
const derivers = new Map<string, (index: bigint) => string>();

parent.on('message', async (m: DeriveRequest) => {
  // EVM runs hash in WebAssembly once it is compiled (at most once per thread, moments after it starts).
  await keccakReady;
  try {
    const key = `${m.networkId}:${m.mode}:${m.xpub}`;
    let derive = derivers.get(key);
    if (!derive) derivers.set(key, (derive = xpubDeriver({ xpubs: { [m.networkId]: m.xpub } }, m.networkId, m.mode as ChainMode)));
    parent.postMessage({ id: m.id, addresses: deriveRun(derive, BigInt(m.start), m.count) } satisfies DeriveReply);
  } catch (e) {
    parent.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) } satisfies DeriveReply);
  }
});
