import fs from 'node:fs';
import path from 'node:path';
import { freePort } from './devserver';
import { BitcoinRpc } from '../src/chains/utxo/rpc';
import type { NodeCommand } from './binaries';
import { spawnNode, startOnFreshPorts, waitUntilReady } from './process';

/** A Bitcoin Core-family node (litecoind, Bitcoin Knots's bitcoind) in regtest with a funded wallet. */
export interface CoreDevnet {
  /** http://user:password@127.0.0.1:port — the password is generated per start, never committed. */
  rpcUrl: string;
  /** The node's own wallet plays the customer; mined coins go to `minerAddress`. */
  walletUrl: string;
  minerAddress: string;
  pid: number;
  stop(): Promise<void>;
}

export interface CoreNodeOptions {
  /** The devnet folder: the node's datadir is `dir/<cmd.name>`, its log `dir/<cmd.name>.log`. */
  dir: string;
  cmd: NodeCommand;
  /** Options of this node beyond the common ones (e.g. litecoind's -upnp=0; Core 29 dropped UPnP). */
  extraArgs?: string[];
}

/**
 * How a node says it lost a port freePort found free to another process before it bound it (seen in CI:
 * "Binding RPC on address 127.0.0.1 port … failed (Address already in use)"; litecoind says "Unable to
 * bind any endpoint for RPC server").
 */
const PORT_LOST = /Address already in use|Unable to bind (any|all) endpoints? for RPC server/;

/**
 * The node in regtest on free loopback ports with its own datadir, a wallet funded by 101 mined blocks
 * (coinbase maturity), -txindex for the legacy-input path and a fallback fee. A start that lost a port
 * starts again on new ports.
 */
export function startCoreNode(opts: CoreNodeOptions): Promise<CoreDevnet> {
  return startOnFreshPorts(() => startOnce(opts), (e) => PORT_LOST.test(e.message));
}

async function startOnce(opts: CoreNodeOptions): Promise<CoreDevnet> {
  const name = opts.cmd.name;
  const datadir = path.join(opts.dir, name);
  fs.mkdirSync(datadir, { recursive: true });
  const rpcPort = await freePort('127.0.0.1');
  const p2pPort = await freePort('127.0.0.1');
  const user = 'gateway';
  const password = Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('hex');
  // Credentials go in a 0600 config file, not on the command line where `ps` would show them.
  const conf = path.join(datadir, 'gateway-rpc.conf');
  fs.writeFileSync(conf, `rpcuser=${user}\nrpcpassword=${password}\n`, { mode: 0o600 });
  const args = [
    '-regtest', '-server', '-txindex', '-listen=0', '-dnsseed=0', '-printtoconsole',
    `-datadir=${datadir}`, `-conf=${conf}`, `-rpcport=${rpcPort}`, `-port=${p2pPort}`,
    '-rpcbind=127.0.0.1', '-rpcallowip=127.0.0.1', '-fallbackfee=0.0002', '-rpcworkqueue=64',
    // Each worker holds one RPC thread in its long poll ({NETWORK}_HEAD_FEED=longpoll): four more than that for the rest.
    '-rpcthreads=8',
    // A regtest chain of a few hundred blocks: the signature and script caches (32 MiB, allocated and
    // written at start), the UTXO cache and parallel script checks are sized for mainnet.
    '-maxsigcachesize=1', '-dbcache=4', '-par=1',
    // A new wallet makes its key pool at once: 1,000 keys of each of 8 kinds by default, the longest part of a
    // first start; the pool is topped up as addresses are used.
    '-keypool=20',
    ...(opts.extraArgs ?? []),
    ...(opts.cmd.nodeArgs ?? []),
  ];
  const log = path.join(opts.dir, `${name}.log`);
  // One malloc arena: glibc's default, one per thread that allocates, holds freed memory in each.
  const proc = spawnNode(opts.cmd.file, [...opts.cmd.args, ...args], log, undefined, { ...process.env, MALLOC_ARENA_MAX: '1' });
  const rpcUrl = `http://${user}:${password}@127.0.0.1:${rpcPort}`;
  // Loading or creating a wallet while the other chains start beside it takes longer than a call's usual 30 s.
  const rpc = new BitcoinRpc(rpcUrl, 120_000);
  try {
    await waitUntilReady(name, proc, () => rpc.call('getblockcount'), 60_000, log);
    const wallets = await rpc.call<string[]>('listwallets');
    if (!wallets.includes('customer')) {
      try {
        await rpc.call('loadwallet', ['customer']);
      } catch {
        await rpc.call('createwallet', ['customer']);
      }
    }
    const walletUrl = `${rpcUrl}/wallet/customer`;
    const wallet = new BitcoinRpc(walletUrl);
    const minerAddress = await wallet.call<string>('getnewaddress', ['', 'bech32']);
    if ((await rpc.call<number>('getblockcount')) < 101) await rpc.call('generatetoaddress', [101, minerAddress]);
    return { rpcUrl, walletUrl, minerAddress, pid: proc.pid, stop: proc.stop };
  } catch (e) {
    await proc.stop();
    throw e;
  }
}

/**
 * Mines `blocks` regtest blocks and flushes the node's block index and chain state to disk at once
 * (gettxoutsetinfo forces the flush): a crash right after, even SIGKILL, keeps those blocks, so a deposit
 * recorded in one is still there after the restart instead of reading as reorged.
 */
export async function mineDurably(rpc: BitcoinRpc, blocks: number, address: string): Promise<void> {
  await rpc.call('generatetoaddress', [blocks, address]);
  await rpc.call('gettxoutsetinfo');
}
