import fs from 'node:fs';
import path from 'node:path';
import type { HdSeed } from '../src/chains/keys';
import { sponsorAddresses } from '../src/chains/sponsor';
import { startAnvil } from './anvil';
import { startSurfnet } from './surfnet';
import { startUtxoDevnets, type UtxoNetworkId } from './utxo-devnets';
import type { CoreNodeState, UtxoNodeState } from './utxo-drive';

/** What `npm run devnet` needs to drive the running chains; holds test keys only, kept 0600 in the data dir. */
export interface DevnetState {
  ethereum?: { rpcUrl: string; chainId: string; customerKey: string; tokens: Record<string, string> };
  solana?: { rpcUrl: string; customerSecret: number[]; tokens: Record<string, string> };
  litecoin?: CoreNodeState;
  /** Bitcoin Knots (Core RPC, wallet) or btcd, whichever `npm run devnet -- install` put here. */
  bitcoin?: UtxoNodeState;
  /** bchd. */
  bitcoincash?: UtxoNodeState;
}

export interface Devnets {
  /** Variables for chainConfigFromEnv: {NETWORK}_RPC_URL, {NETWORK}_CHAIN=regtest, {TICKER}_CONTRACT. */
  env: Record<string, string>;
  state: DevnetState;
  stateFile: string;
  /** Child processes (anvil, surfnet, the UTXO nodes). */
  pids: number[];
  /**
   * Networks whose local chain is new although an earlier run had one: surfnet (Solana) keeps its chain
   * in memory only, and anvil's state can be lost. Payments recorded on the old chain can never complete.
   */
  newChains: string[];
  stop(): Promise<void>;
}

export interface DevnetOptions {
  /** The gateway's seed: its EVM gas tank and Solana fee payer get funded. */
  seed?: HdSeed;
  /** Start litecoind (default: when /usr/bin/litecoind exists). */
  litecoin?: boolean;
  /** Start the local Bitcoin node, Knots or btcd (default: when installed, devnet/binaries.ts). */
  bitcoin?: boolean;
  /** Start bchd (default: when installed). */
  bitcoincash?: boolean;
  /** Anvil seconds per block (default 2); confirmations rise without anyone mining. */
  ethBlockTime?: number;
  /** Milliseconds between regtest blocks of every UTXO node (default 10 000; 0 = only `npm run devnet -- mine`). */
  ltcBlockIntervalMs?: number;
  solSlotTimeMs?: number;
  /** surfnet on a thread of this process instead of a process of its own (`npm start`: one copy of Node less). */
  solInThread?: boolean;
  /** btcd's and bchd's signature cache entries (`npm start`: a small cache; devnet/btcd-node.ts). */
  btcdSigCacheEntries?: number;
}

export const DEVNET_STATE_FILE = 'devnet.json';

/**
 * One-second slots for the embedded default: finality (32 slots) takes about 32 s.
 * docs/decisions/0017-surfnet-one-second-slots.md.
 */
export const DEFAULT_SOL_SLOT_MS = 1000;

export function readDevnetState(dir: string): DevnetState {
  const file = path.join(dir, DEVNET_STATE_FILE);
  if (!fs.existsSync(file)) throw new Error(`no devnet state at ${file}: is \`npm start\` running with its local chains?`);
  return JSON.parse(fs.readFileSync(file, 'utf8')) as DevnetState;
}

/**
 * Local chains for the embedded default: anvil (chain state kept in dir, dumped every second, so that it
 * survives a crash), surfnet in a child process or on a thread (`solInThread`; in memory: a new chain on every start),
 * and the UTXO nodes in regtest that are installed (litecoind, Bitcoin Knots or btcd, bchd), each on free
 * loopback ports, with funded customer and gas-tank wallets. Keys are generated here at run time.
 */
export async function startDevnets(dir: string, opts: DevnetOptions = {}): Promise<Devnets> {
  fs.mkdirSync(dir, { recursive: true });
  const stateFile = path.join(dir, DEVNET_STATE_FILE);
  const previous: DevnetState = fs.existsSync(stateFile) ? (JSON.parse(fs.readFileSync(stateFile, 'utf8')) as DevnetState) : {};
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  const env: Record<string, string> = {};
  const pids: number[] = [];
  const newChains: string[] = [];
  const state: DevnetState = {};
  try {
    const sponsors = opts.seed ? sponsorAddresses(opts.seed) : undefined;
    const tank = sponsors?.evmGasTank;
    const payer = sponsors?.solFeePayer;
    // Each chain on its own: started at once, and whatever started is stopped if another failed.
    const [anvil, surf, utxo] = await Promise.allSettled([
      startAnvil({
        dir,
        fund: tank ? [tank] : [],
        blockTime: opts.ethBlockTime ?? 2,
        persist: true,
        previous: previous.ethereum ? { customerKey: previous.ethereum.customerKey, tokens: previous.ethereum.tokens } : undefined,
      }),
      startSurfnet({ fund: payer ? [payer] : [], slotTimeMs: opts.solSlotTimeMs ?? DEFAULT_SOL_SLOT_MS, inThread: opts.solInThread }),
      startUtxoDevnets(dir, {
        litecoin: opts.litecoin,
        bitcoin: opts.bitcoin,
        bitcoincash: opts.bitcoincash,
        blockIntervalMs: opts.ltcBlockIntervalMs ?? 10_000,
        btcdSigCacheEntries: opts.btcdSigCacheEntries,
      }),
    ]);
    for (const r of [anvil, surf, utxo]) if (r.status === 'fulfilled') stops.push(r.value.stop);
    for (const r of [anvil, surf, utxo]) if (r.status === 'rejected') throw r.reason;
    const eth = (anvil as PromiseFulfilledResult<Awaited<ReturnType<typeof startAnvil>>>).value;
    pids.push(eth.pid);
    if (previous.ethereum && !eth.restored) newChains.push('ethereum');
    state.ethereum = { rpcUrl: eth.rpcUrl, chainId: eth.chainId.toString(), customerKey: eth.customerKey, tokens: eth.tokens };
    Object.assign(env, { ETHEREUM_RPC_URL: eth.rpcUrl, ETHEREUM_WS_URL: eth.rpcUrl.replace(/^http/, 'ws'), ETHEREUM_CHAIN: 'regtest', ERC20_USDT_CONTRACT: eth.tokens.erc20_usdt });

    const sol = (surf as PromiseFulfilledResult<Awaited<ReturnType<typeof startSurfnet>>>).value;
    if (sol.pid !== undefined) pids.push(sol.pid);
    if (previous.solana) newChains.push('solana');
    state.solana = { rpcUrl: sol.rpcUrl, customerSecret: sol.customerSecret, tokens: sol.tokens };
    Object.assign(env, { SOLANA_RPC_URL: sol.rpcUrl, SOLANA_WS_URL: sol.wsUrl, SOLANA_CHAIN: 'regtest', SOL_USDC_CONTRACT: sol.tokens.sol_usdc });

    const nodes = (utxo as PromiseFulfilledResult<Awaited<ReturnType<typeof startUtxoDevnets>>>).value;
    pids.push(...nodes.pids);
    for (const [network, st] of Object.entries(nodes.states) as [UtxoNetworkId, UtxoNodeState][]) {
      if (network === 'litecoin') state.litecoin = st as CoreNodeState;
      else state[network] = st;
      Object.assign(env, { [`${network.toUpperCase()}_RPC_URL`]: st.rpcUrl, [`${network.toUpperCase()}_CHAIN`]: 'regtest' });
      // Bitcoin Core's family serves the long poll that wakes the watcher at each block; btcd and bchd do not.
      if (st.family !== 'btcd') env[`${network.toUpperCase()}_HEAD_FEED`] = 'longpoll';
    }
    fs.writeFileSync(stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
    return { env, state, stateFile, pids, newChains, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
