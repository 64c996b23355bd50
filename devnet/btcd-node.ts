import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from './devserver';
import { NodeUnavailableError } from '../src/chains/adapter';
import { BitcoinRpc } from '../src/chains/utxo/rpc';
import type { NodeCommand } from './binaries';
import { spawnNode, waitUntilReady } from './process';
import { loadOrCreateCustomer, type CustomerKey } from './utxo-customer';

/**
 * btcd or bchd in regtest. These nodes have no wallet: the customer is a key generated here at the first
 * start and kept with the chain it owns (`<datadir>/customer.key`, 0600); every block is mined to it, so its
 * coinbases fund the payments (devnet/utxo-customer.ts). -txindex and -addrindex let it find them.
 */
export interface BtcdDevnet {
  rpcUrl: string;
  customer: CustomerKey;
  pid: number;
  stop(): Promise<void>;
}

export interface BtcdNodeOptions {
  dir: string;
  cmd: NodeCommand;
  /** The registry network the node serves: bitcoin (btcd) or bitcoincash (bchd). */
  network: 'bitcoin' | 'bitcoincash';
  /** Blocks mined at the first start: coinbases mature after 100, so `n - 100` of them are spendable. */
  initialBlocks?: number;
  /**
   * Entries of the signature cache (the node's default: 100,000). btcd and bchd allocate the cache's map at
   * that size at start, about 13 MB of heap; a regtest chain of a few payments fills a few dozen.
   */
  sigCacheEntries?: number;
}

/**
 * The JSON-RPC server runs without TLS (loopback only), but bchd's gRPC server beside it always loads a
 * certificate: a throw-away self-signed one is made with openssl at the first start, in the datadir.
 */
function ensureCertificate(datadir: string): { cert: string; key: string } {
  const cert = path.join(datadir, 'rpc.cert');
  const key = path.join(datadir, 'rpc.key');
  if (fs.existsSync(cert) && fs.existsSync(key)) return { cert, key };
  const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '3650', '-subj', '/CN=localhost'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`openssl could not make the node's local certificate (apt-get install -y openssl): ${(r.stderr || String(r.error)).trim().slice(-300)}`);
  fs.chmodSync(key, 0o600);
  return { cert, key };
}

export async function startBtcdNode(opts: BtcdNodeOptions): Promise<BtcdDevnet> {
  const name = opts.cmd.name;
  const datadir = path.join(opts.dir, name);
  fs.mkdirSync(datadir, { recursive: true });
  const customer = loadOrCreateCustomer(path.join(datadir, 'customer.key'), opts.network);
  const [rpcPort, p2pPort, grpcPort] = [await freePort('127.0.0.1'), await freePort('127.0.0.1'), await freePort('127.0.0.1')];
  const user = 'gateway';
  const password = Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('hex');
  const conf = path.join(datadir, 'gateway-rpc.conf');
  fs.writeFileSync(conf, `rpcuser=${user}\nrpcpass=${password}\n`, { mode: 0o600 });
  const args = [
    `--configfile=${conf}`, '--regtest', `--datadir=${path.join(datadir, 'data')}`, `--logdir=${path.join(datadir, 'logs')}`,
    '--notls', `--rpclisten=127.0.0.1:${rpcPort}`, `--listen=127.0.0.1:${p2pPort}`,
    '--nodnsseed', '--txindex', '--addrindex', `--miningaddr=${customer.address}`,
    // Closer to disk: the UTXO cache is flushed with every block and the database cache at the first write
    // over a second after its last flush. With the defaults (30 minutes, 450 MiB) a SIGKILL lost the whole
    // regtest chain; now it loses only what was written within the last second or so, typically the
    // newest block (measured: chain kept to the block before). These nodes have no flush call to do better.
    '--dbflushinterval=1', '--utxocachemaxsize=0',
    ...(opts.sigCacheEntries === undefined ? [] : [`--sigcachemaxsize=${opts.sigCacheEntries}`]),
  ];
  // bchd only: its gRPC server (with the certificate it insists on) on a free loopback port instead of the
  // fixed default, and a regtest chain that survives a restart (bchd starts regtest afresh unless told not to).
  if (name === 'bchd') {
    const { cert, key } = ensureCertificate(datadir);
    args.push(`--rpccert=${cert}`, `--rpckey=${key}`, `--grpclisten=127.0.0.1:${grpcPort}`, '--regtestnoreset');
  }
  const log = path.join(opts.dir, `${name}.log`);
  const proc = spawnNode(opts.cmd.file, [...opts.cmd.args, ...args], log);
  const rpcUrl = `http://${user}:${password}@127.0.0.1:${rpcPort}`;
  const rpc = new BitcoinRpc(rpcUrl, 120_000);
  try {
    await waitUntilReady(name, proc, () => rpc.call('getblockcount'), 60_000, log);
    const want = opts.initialBlocks ?? 110;
    // Started beside the other chains, bchd dropped the connection of the call right after the readiness probe
    // ("other side closed") in one start of three: the setup is read again and finished on a new one. A
    // repeated `generate` that had gone through only mines a few more regtest blocks.
    for (let attempt = 1; ; attempt++) {
      try {
        const height = await rpc.call<number>('getblockcount');
        if (height < want) await rpc.call('generate', [want - height]);
        break;
      } catch (e) {
        if (attempt >= 3 || !(e instanceof NodeUnavailableError) || !/not reachable/.test(e.message)) throw e;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    return { rpcUrl, customer, pid: proc.pid, stop: proc.stop };
  } catch (e) {
    await proc.stop();
    throw e;
  }
}
