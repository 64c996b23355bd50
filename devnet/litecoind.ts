import { litecoinNode } from './binaries';
import { startCoreNode, type CoreDevnet } from './core-node';

export { mineDurably } from './core-node';
export type LitecoindDevnet = CoreDevnet;

/** Debian's litecoind, or the binary named by LITECOIND_PATH. */
export const litecoindBinary = (): string => process.env.LITECOIND_PATH || '/usr/bin/litecoind';

export function litecoindAvailable(): boolean {
  return litecoinNode() !== undefined;
}

/** Debian's litecoind in regtest (devnet/core-node.ts), its datadir `dir/litecoind`. */
export async function startLitecoind(opts: { dir: string; binary?: string }): Promise<LitecoindDevnet> {
  const cmd = opts.binary ? { name: 'litecoind', family: 'core' as const, file: opts.binary, args: [] } : litecoinNode();
  if (!cmd) throw new Error(`litecoind is not installed (${litecoindBinary()}): apt-get install -y litecoind, or npm run devnet -- install`);
  return startCoreNode({ dir: opts.dir, cmd, extraArgs: ['-upnp=0'] });
}
