/**
 * Where the local UTXO nodes are: a path named by the environment, else what `npm run devnet -- install`
 * put under .tools/nodes (git-ignored), else the system's package (litecoind). Two RPC families:
 * - core: Bitcoin Core and its forks with a wallet (litecoind, Bitcoin Knots's bitcoind);
 * - btcd: btcd and its Bitcoin Cash fork bchd, no wallet, an RPC of their own (src/chains/utxo/dialect.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/project-root';
import { loaderCommand } from './install/debian-root';

export type NodeFamily = 'core' | 'btcd';

export interface NodeCommand {
  /** litecoind, bitcoind, btcd, bchd. */
  name: string;
  family: NodeFamily;
  /** What runs: the binary itself, or the loader of an unpacked Debian root with the binary as argument. */
  file: string;
  args: string[];
  /** Options every start of this node takes, after the caller's (devnet/core-node.ts). */
  nodeArgs?: string[];
}

export { PROJECT_ROOT };
/** Installed nodes: NODES_DIR, else .tools/nodes of the project. */
export const nodesDir = (): string => process.env.NODES_DIR || path.join(PROJECT_ROOT, '.tools', 'nodes');
export const knotsDir = (): string => path.join(nodesDir(), 'bitcoin-knots');
export const KNOTS_BITCOIND = 'usr/bin/bitcoind';
export const goNodeBinary = (name: 'btcd' | 'bchd'): string => path.join(nodesDir(), 'bin', name);

const exists = (p: string) => {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};
const plain = (name: string, family: NodeFamily, file: string): NodeCommand => ({ name, family, file, args: [] });

/** Debian's litecoind, or the binary named by LITECOIND_PATH. */
export function litecoinNode(): NodeCommand | undefined {
  const file = process.env.LITECOIND_PATH || '/usr/bin/litecoind';
  return exists(file) ? plain('litecoind', 'core', file) : undefined;
}

/** BITCOIND_PATH (a Core-compatible bitcoind), BTCD_PATH, the installed Bitcoin Knots, the built btcd. */
export function bitcoinNode(): NodeCommand | undefined {
  if (process.env.BITCOIND_PATH) return exists(process.env.BITCOIND_PATH) ? plain('bitcoind', 'core', process.env.BITCOIND_PATH) : undefined;
  if (process.env.BTCD_PATH) return exists(process.env.BTCD_PATH) ? plain('btcd', 'btcd', process.env.BTCD_PATH) : undefined;
  const knots = path.join(knotsDir(), 'root');
  if (exists(path.join(knots, KNOTS_BITCOIND))) {
    const { file, args } = loaderCommand(knots, KNOTS_BITCOIND);
    // Knots refuses to relay or mine what it calls parasites, among them any transaction with nLockTime 21
    // (CAT-21). Its own wallet's anti-fee-sniping sometimes picks a locktime below the tip, 21 included:
    // the customer's payment then stayed out of the mempool and out of every block. A local test chain
    // takes every standard transaction.
    return { name: 'bitcoind', family: 'core', file, args, nodeArgs: ['-rejectparasites=0'] };
  }
  return exists(goNodeBinary('btcd')) ? plain('btcd', 'btcd', goNodeBinary('btcd')) : undefined;
}

/** BCHD_PATH, else the built bchd. */
export function bitcoinCashNode(): NodeCommand | undefined {
  const file = process.env.BCHD_PATH || goNodeBinary('bchd');
  return exists(file) ? plain('bchd', 'btcd', file) : undefined;
}

/** The local node of a UTXO network the devnets run, if there is one here. */
export function utxoNodeOf(network: 'litecoin' | 'bitcoin' | 'bitcoincash'): NodeCommand | undefined {
  if (network === 'litecoin') return litecoinNode();
  if (network === 'bitcoin') return bitcoinNode();
  return bitcoinCashNode();
}
