import fs from 'node:fs';
import path from 'node:path';
import { ContractFactory, JsonRpcProvider, Network, Wallet, parseEther, parseUnits } from 'ethers';
import { freePort } from './devserver';
import { compileTestToken } from './erc20';
import { jsonRpc } from '../src/chains/json-rpc';
import { spawnNode, startOnFreshPorts, waitUntilReady, type NodeProcess } from './process';

export const ANVIL_CHAIN_ID = 31337n;

export function anvilBinary(): string {
  return path.join(path.dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil');
}

export interface AnvilDevnet {
  rpcUrl: string;
  chainId: bigint;
  pid: number;
  /** Funded customer wallet key, generated at start (test key, never committed). */
  customerKey: string;
  /** ticker → deployed test ERC-20 (6 decimals), the supply held by the customer. */
  tokens: Record<string, string>;
  /** False when a previous run's chain was asked for (`previous`) but its state was gone: a new chain. */
  restored: boolean;
  stop(): Promise<void>;
}

export interface AnvilOptions {
  dir: string;
  /** Addresses to give ether to (the gateway's gas tank). */
  fund?: string[];
  /** Seconds per block; undefined = mine on every transaction and on request only. */
  blockTime?: number;
  /** Persist chain state in dir across restarts. */
  persist?: boolean;
  /** Reuse keys and contracts from a previous run of the same persisted chain. */
  previous?: { customerKey: string; tokens: Record<string, string> };
}

/**
 * The state file to load: a crash in the middle of a dump can leave it cut short, and anvil then refuses
 * to start. A state file that parses is copied aside; one that does not is replaced by that copy.
 */
function usableStateFile(file: string): string {
  const backup = `${file}.last-good`;
  if (!fs.existsSync(file)) return file;
  try {
    JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.copyFileSync(file, backup);
  } catch {
    if (fs.existsSync(backup)) {
      console.error(`anvil state ${file} is unreadable (cut short by a crash); starting from the last good copy`);
      fs.copyFileSync(backup, file);
    } else {
      console.error(`anvil state ${file} is unreadable (cut short by a crash); the local Ethereum chain starts new`);
      fs.rmSync(file);
    }
  }
  return file;
}

async function waitForReceipt(rpcUrl: string, hash: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const receipt = await jsonRpc<{ status: string } | null>(rpcUrl, 'eth_getTransactionReceipt', [hash]);
    if (receipt) {
      if (receipt.status !== '0x1') throw new Error(`the test token's deployment ${hash} failed`);
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the test token's deployment ${hash} was not mined within ${timeoutMs} ms`);
}

/**
 * anvil on a free loopback port. A start whose port another process took before anvil bound it ("Error:
 * Address already in use (os error 98)") starts again on a new port.
 */
export function startAnvil(opts: AnvilOptions): Promise<AnvilDevnet> {
  return startOnFreshPorts(() => startOnce(opts), (e) => e.message.includes('Address already in use'));
}

async function startOnce(opts: AnvilOptions): Promise<AnvilDevnet> {
  const port = await freePort('127.0.0.1');
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', ANVIL_CHAIN_ID.toString(), '--accounts', '1', '--mnemonic-random', '--silent'];
  if (opts.blockTime) args.push('--block-time', String(opts.blockTime));
  // anvil writes its state on a clean exit only; every second as well, so that a crash (SIGKILL) of the
  // process tree loses at most the last second of the local chain instead of all of it.
  if (opts.persist) args.push('--state', usableStateFile(path.join(opts.dir, 'anvil-state.json')), '--state-interval', '1');
  const log = path.join(opts.dir, 'anvil.log');
  const proc: NodeProcess = spawnNode(anvilBinary(), args, log);
  const rpcUrl = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady('anvil', proc, () => jsonRpc(rpcUrl, 'eth_chainId'), 30_000, log);
    const provider = new JsonRpcProvider(rpcUrl, Network.from(ANVIL_CHAIN_ID), { staticNetwork: true, cacheTimeout: -1 });
    const customer = opts.previous ? new Wallet(opts.previous.customerKey, provider) : Wallet.createRandom(provider);
    const hexEth = (n: bigint) => '0x' + n.toString(16);
    for (const a of [customer.address, ...(opts.fund ?? [])]) await jsonRpc(rpcUrl, 'anvil_setBalance', [a, hexEth(parseEther('1000'))]);
    let tokens = opts.previous?.tokens;
    // A previous run's contract survives only if anvil dumped its state on exit.
    if (tokens && (await provider.getCode(tokens.erc20_usdt)) === '0x') tokens = undefined;
    if (!tokens) {
      const { abi, bytecode } = compileTestToken(opts.dir);
      const factory = new ContractFactory(abi as never, bytecode, customer);
      const token = await factory.deploy('Test USD', 'TUSD', 6, customer.address, parseUnits('1000000000', 6));
      // The receipt read here, not by the provider's block polling (waitForDeployment): a receipt request of
      // that polling still under way when the provider is destroyed below is rejected, with no one to catch it.
      await waitForReceipt(rpcUrl, token.deploymentTransaction()!.hash);
      const address = await token.getAddress();
      tokens = { erc20_usdt: address };
    }
    provider.destroy();
    const restored = opts.previous !== undefined && tokens === opts.previous.tokens;
    return { rpcUrl, chainId: ANVIL_CHAIN_ID, pid: proc.pid, customerKey: customer.privateKey, tokens, restored, stop: proc.stop };
  } catch (e) {
    await proc.stop();
    throw e;
  }
}
