import { jsonRpc } from '../../src/chains/json-rpc';
import { BitcoinRpc } from '../../src/chains/utxo/rpc';
import type { DevnetState } from '../../devnet';

/**
 * Whether each local node itself answers (directly, not through the hostile proxy): a node of the test
 * bed that stops answering is reported as such, so that its outage is not read as the gateway's fault.
 */
export interface NodeOutage {
  /** Seconds after the probe started when the node first missed a 5 s deadline; null if it never did. */
  firstMissS: number | null;
  missedProbes: number;
  probes: number;
}

export function probeNodes(state: DevnetState, everyMs = 3000) {
  const started = Date.now();
  const out: Record<string, NodeOutage> = {};
  const probes: Record<string, () => Promise<unknown>> = {
    ethereum: () => jsonRpc(state.ethereum!.rpcUrl, 'eth_blockNumber'),
    solana: () => jsonRpc(state.solana!.rpcUrl, 'getSlot'),
    litecoin: () => new BitcoinRpc(state.litecoin!.rpcUrl, 5000).call('getblockcount'),
  };
  for (const k of Object.keys(probes)) out[k] = { firstMissS: null, missedProbes: 0, probes: 0 };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await Promise.all(
        Object.entries(probes).map(async ([k, probe]) => {
          out[k].probes++;
          const ok = await Promise.race([probe().then(() => true, () => false), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
          if (!ok) {
            out[k].missedProbes++;
            out[k].firstMissS ??= Math.round((Date.now() - started) / 1000);
          }
        }),
      );
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    outages: () => out,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
