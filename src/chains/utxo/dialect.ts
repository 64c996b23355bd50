/**
 * The RPC dialects of the UTXO nodes the gateway talks to, in one place:
 * - core: Bitcoin Core and its forks (litecoind, Bitcoin Knots, dogecoind, zcashd, Bitcoin Cash Node);
 * - btcd: btcd and its Bitcoin Cash fork bchd. `getblock` takes an integer verbosity and puts decoded
 *   transactions under `rawtx`, `getrawtransaction` takes an integer verbose flag, there is no
 *   `estimatesmartfee` (nor a wallet), and a resent transaction is refused with words of its own.
 * The adapter asks the dialect; nothing else in src/chains/utxo tells the nodes apart.
 */
import type { NodePolicyReading } from './policy';
import { BitcoinRpc, RpcError } from './rpc';

export interface RpcVout {
  value: string;
  n: number;
  scriptPubKey: { address?: string; addresses?: string[]; type?: string };
}
export interface RpcTx {
  txid: string;
  vin: { coinbase?: string; txid?: string; vout?: number }[];
  vout: RpcVout[];
}
export interface RpcBlock {
  hash: string;
  height: number;
  tx: RpcTx[];
}
/** A block header's place: confirmations −1 for a block the node knows off its active chain. */
export interface HeaderInfo {
  height: number;
  confirmations: number;
}
/** A verbose transaction lookup: where it is mined, if it is. */
export interface TxInfo {
  confirmations?: number;
  blockhash?: string;
}

export interface RpcDialect {
  readonly name: 'core' | 'btcd';
  /** The block with its transactions decoded. */
  block(rpc: BitcoinRpc, hash: string): Promise<RpcBlock>;
  /** getblockheader, verbose; RpcError −5 for a block the node does not know. */
  header(rpc: BitcoinRpc, hash: string): Promise<HeaderInfo>;
  /** getrawtransaction, verbose (needs -txindex for a mined transaction not of the node's wallet). */
  txInfo(rpc: BitcoinRpc, txid: string): Promise<TxInfo>;
  /** getrawtransaction, the hex. */
  rawTx(rpc: BitcoinRpc, txid: string): Promise<string>;
  /** The node's fee-rate estimate in coins per kvB for a confirmation target; undefined when it has none. */
  feeRate(rpc: BitcoinRpc, targetBlocks: number): Promise<string | undefined>;
  /** Whether a sendrawtransaction refusal says these bytes are already in the mempool or a block. */
  alreadyKnown(message: string): boolean;
  /** The node's relay policy as far as it tells it (fields it does not give are left out). */
  policy(rpc: BitcoinRpc): Promise<NodePolicyReading>;
  /**
   * Whether the node would take these bytes into its mempool now, and its reject reason (a short code such
   * as "dust" or "min relay fee not met") when not; undefined for a node that cannot say (btcd, bchd).
   */
  testAccept(rpc: BitcoinRpc, raw: string): Promise<{ allowed: boolean; reason?: string } | undefined>;
}

/** One call's answer, or nothing where the node has no such method (an older fork): its fields are then unknown. */
async function optional<T>(rpc: BitcoinRpc, method: string): Promise<Partial<T>> {
  try {
    return (await rpc.call<T>(method)) ?? {};
  } catch (e) {
    if (e instanceof RpcError) return {};
    throw e;
  }
}

// Core 0.21 (litecoind): "transaction already in block chain"; Core 25+ (Knots 29) says of a mined
// transaction "Transaction outputs already in utxo set" (RPC_VERIFY_ALREADY_IN_UTXO_SET, -27).
const CORE_ALREADY_KNOWN = ['txn-already-known', 'txn-already-in-mempool', 'already in block chain', 'transaction already in block chain', 'outputs already in utxo set'];
// btcd/bchd mempool: "already have transaction <txid>"; mined: "transaction already exists" (btcd) and
// "transaction already exists in blockchain" (bchd's wording of the same check).
const BTCD_ALREADY_KNOWN = ['already have transaction', 'transaction already exists'];

const matches = (words: string[]) => (message: string) => {
  const m = message.toLowerCase();
  return words.some((w) => m.includes(w));
};

export const CORE_DIALECT: RpcDialect = {
  name: 'core',
  block: (rpc, hash) => rpc.call<RpcBlock>('getblock', [hash, 2]),
  header: (rpc, hash) => rpc.call<HeaderInfo>('getblockheader', [hash, true]),
  txInfo: (rpc, txid) => rpc.call<TxInfo>('getrawtransaction', [txid, true]),
  rawTx: (rpc, txid) => rpc.call<string>('getrawtransaction', [txid, false]),
  async feeRate(rpc, target) {
    try {
      return (await rpc.call<{ feerate?: string }>('estimatesmartfee', [target])).feerate;
    } catch (e) {
      if (e instanceof RpcError) return undefined;
      throw e;
    }
  },
  alreadyKnown: matches(CORE_ALREADY_KNOWN),
  async policy(rpc) {
    const [net, pool] = await Promise.all([
      optional<{ relayfee?: string }>(rpc, 'getnetworkinfo'),
      optional<{ mempoolminfee?: string; dustrelayfee?: string }>(rpc, 'getmempoolinfo'),
    ]);
    return { relayfee: net.relayfee, mempoolminfee: pool.mempoolminfee, dustrelayfee: pool.dustrelayfee };
  },
  async testAccept(rpc, raw) {
    let answer: Array<{ allowed?: boolean; 'reject-reason'?: string }>;
    try {
      answer = await rpc.call('testmempoolaccept', [[raw]]);
    } catch (e) {
      if (e instanceof RpcError) return undefined;
      throw e;
    }
    const r = answer?.[0];
    if (!r || typeof r.allowed !== 'boolean') return undefined;
    return r.allowed ? { allowed: true } : { allowed: false, reason: r['reject-reason'] };
  },
};

export const BTCD_DIALECT: RpcDialect = {
  name: 'btcd',
  async block(rpc, hash) {
    const b = await rpc.call<Omit<RpcBlock, 'tx'> & { rawtx?: RpcTx[] }>('getblock', [hash, 2]);
    return { hash: b.hash, height: b.height, tx: b.rawtx ?? [] };
  },
  // A known block off the main chain is an error here ("block … is not in the main chain", -32603) where
  // Core answers confirmations -1; the height of such a block is not given (nor needed).
  async header(rpc, hash) {
    try {
      return await rpc.call<HeaderInfo>('getblockheader', [hash, true]);
    } catch (e) {
      if (e instanceof RpcError && /not in the main chain/i.test(e.message)) return { height: -1, confirmations: -1 };
      throw e;
    }
  },
  txInfo: (rpc, txid) => rpc.call<TxInfo>('getrawtransaction', [txid, 1]),
  rawTx: (rpc, txid) => rpc.call<string>('getrawtransaction', [txid, 0]),
  // btcd's `estimatefee` answers from its own mempool history only (-1 or an error until it has some):
  // the adapter's fallback rate is the honest figure on such a node.
  feeRate: async () => undefined,
  alreadyKnown: matches(BTCD_ALREADY_KNOWN),
  async policy(rpc) {
    return { relayfee: (await optional<{ relayfee?: string }>(rpc, 'getinfo')).relayfee };
  },
  // No testmempoolaccept: a refusal of these bytes is never evidence here, and they are re-sent as stored.
  testAccept: async () => undefined,
};

/** JSON-RPC "Method not found". */
const METHOD_NOT_FOUND = -32601;

/**
 * Which dialect a node speaks: btcd and bchd answer `version` with a `btcdjsonrpcapi` entry (bchd too);
 * Core-family nodes have no such method. Anything else is no answer, not a guess: a node that does not
 * answer (NodeUnavailableError) or answers `version` with another error (a Core node still warming up
 * says -28) is asked again on the next call.
 */
export async function detectDialect(rpc: BitcoinRpc): Promise<RpcDialect> {
  try {
    const v = await rpc.call<Record<string, unknown> | null>('version');
    if (v && Object.keys(v).some((k) => /^(btcd|bchd)jsonrpcapi$/.test(k))) return BTCD_DIALECT;
    return CORE_DIALECT;
  } catch (e) {
    if (e instanceof RpcError && e.code === METHOD_NOT_FOUND) return CORE_DIALECT;
    throw e;
  }
}

/** A node and its dialect, found on first use and kept (a failed detection is tried again next time). */
export class DialectNode {
  private found?: Promise<RpcDialect>;

  constructor(
    readonly rpc: BitcoinRpc,
    dialect?: RpcDialect,
  ) {
    if (dialect) this.found = Promise.resolve(dialect);
  }

  dialect(): Promise<RpcDialect> {
    if (!this.found) {
      const p = detectDialect(this.rpc);
      p.catch(() => {
        if (this.found === p) this.found = undefined;
      });
      this.found = p;
    }
    return this.found;
  }

  async block(hash: string): Promise<RpcBlock> {
    return (await this.dialect()).block(this.rpc, hash);
  }
  async header(hash: string): Promise<HeaderInfo> {
    return (await this.dialect()).header(this.rpc, hash);
  }
  async txInfo(txid: string): Promise<TxInfo> {
    return (await this.dialect()).txInfo(this.rpc, txid);
  }
  async rawTx(txid: string): Promise<string> {
    return (await this.dialect()).rawTx(this.rpc, txid);
  }
  async feeRate(targetBlocks: number): Promise<string | undefined> {
    return (await this.dialect()).feeRate(this.rpc, targetBlocks);
  }
  async alreadyKnown(message: string): Promise<boolean> {
    return (await this.dialect()).alreadyKnown(message);
  }
  async policy(): Promise<NodePolicyReading> {
    return (await this.dialect()).policy(this.rpc);
  }
  async testAccept(raw: string): Promise<{ allowed: boolean; reason?: string } | undefined> {
    return (await this.dialect()).testAccept(this.rpc, raw);
  }
  /** Whether the output is unspent, counting spends in the node's mempool (gettxout with include_mempool). */
  async unspent(txid: string, vout: number): Promise<boolean> {
    return (await this.rpc.call<unknown>('gettxout', [txid, vout, true])) !== null;
  }
}
