/**
 * The local UTXO nodes of the embedded default, started side by side: litecoind, the Bitcoin node (Bitcoin
 * Knots, or btcd) and bchd, each when installed (devnet/binaries.ts) unless asked for explicitly.
 * Each mines a block every `blockIntervalMs` so that confirmations rise by themselves.
 */
import { bitcoinCashNode, bitcoinNode, litecoinNode, type NodeCommand } from './binaries';
import { startBtcdNode } from './btcd-node';
import { startCoreNode } from './core-node';
import { utxoDriver, type UtxoNodeState } from './utxo-drive';

export type UtxoNetworkId = 'litecoin' | 'bitcoin' | 'bitcoincash';

export interface UtxoDevnetOptions {
  /** true: must start (an error when not installed); false: not started; undefined: when installed. */
  litecoin?: boolean;
  bitcoin?: boolean;
  bitcoincash?: boolean;
  /** 0: blocks only on request. */
  blockIntervalMs: number;
  /** btcd's and bchd's signature cache entries (devnet/btcd-node.ts); the node's default when unset. */
  btcdSigCacheEntries?: number;
}

export interface UtxoDevnets {
  states: Partial<Record<UtxoNetworkId, UtxoNodeState>>;
  pids: number[];
  stop(): Promise<void>;
}

const INSTALL = 'npm run devnet -- install';

async function startOne(dir: string, network: UtxoNetworkId, cmd: NodeCommand, opts: UtxoDevnetOptions): Promise<{ state: UtxoNodeState; pid: number; stop: () => Promise<void> }> {
  if (cmd.family === 'core') {
    // Core 29 (Knots) dropped UPnP and warns about -upnp; litecoind (Core 0.21) still has it.
    const n = await startCoreNode({ dir, cmd, extraArgs: cmd.name === 'litecoind' ? ['-upnp=0'] : [] });
    return { state: { family: 'core', node: cmd.name, rpcUrl: n.rpcUrl, walletUrl: n.walletUrl, minerAddress: n.minerAddress }, pid: n.pid, stop: n.stop };
  }
  if (network === 'litecoin') throw new Error('litecoin runs on litecoind only');
  const n = await startBtcdNode({ dir, cmd, network, sigCacheEntries: opts.btcdSigCacheEntries });
  return { state: { family: 'btcd', node: cmd.name, rpcUrl: n.rpcUrl, customer: n.customer }, pid: n.pid, stop: n.stop };
}

export async function startUtxoDevnets(dir: string, opts: UtxoDevnetOptions): Promise<UtxoDevnets> {
  const wanted: [UtxoNetworkId, boolean | undefined, NodeCommand | undefined][] = [
    ['litecoin', opts.litecoin, litecoinNode()],
    ['bitcoin', opts.bitcoin, bitcoinNode()],
    ['bitcoincash', opts.bitcoincash, bitcoinCashNode()],
  ];
  const jobs: [UtxoNetworkId, ReturnType<typeof startOne>][] = [];
  for (const [network, want, cmd] of wanted) {
    if (want === false || (want === undefined && !cmd)) continue;
    if (!cmd) {
      jobs.push([network, Promise.reject(new Error(`no local ${network} node is installed: ${INSTALL}`))]);
      continue;
    }
    jobs.push([network, startOne(dir, network, cmd, opts)]);
  }
  const settled = await Promise.allSettled(jobs.map(([, p]) => p));
  const stops: (() => Promise<void>)[] = [];
  const states: UtxoDevnets['states'] = {};
  const pids: number[] = [];
  settled.forEach((r, i) => {
    if (r.status !== 'fulfilled') return;
    stops.push(r.value.stop);
    pids.push(r.value.pid);
    states[jobs[i][0]] = r.value.state;
  });
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  if (opts.blockIntervalMs > 0) {
    for (const [network, st] of Object.entries(states) as [UtxoNetworkId, UtxoNodeState][]) {
      const drive = utxoDriver(network, st);
      // A failed block is tried again at the next tick; the operator hears of it once, not every tick. A tick
      // while the last block is still being mined is skipped (btcd refuses a second `generate` meanwhile).
      let failing: string | undefined;
      let mining = false;
      const mine = async () => {
        if (mining) return;
        mining = true;
        try {
          await drive.mine(1);
          if (failing !== undefined) console.warn(`local ${network} chain: mining again`);
          failing = undefined;
        } catch (e) {
          const message = (e as Error).message;
          if (failing !== message) console.warn(`local ${network} chain: mining a block failed: ${message}`);
          failing = message;
        } finally {
          mining = false;
        }
      };
      const timer = setInterval(() => void mine(), opts.blockIntervalMs);
      timer.unref();
      stops.push(async () => clearInterval(timer));
    }
  }
  return { states, pids, stop };
}
