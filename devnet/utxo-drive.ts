/**
 * Driving a local UTXO chain the way a customer and a miner would, whichever node runs it: a Core-family
 * node through its wallet (litecoind, Bitcoin Knots), a wallet-less btcd/bchd through the customer key.
 */
import { BitcoinRpc, fromSats, toSats } from '../src/chains/utxo/rpc';
import { mineDurably } from './core-node';
import { customerPay, randomAddress, receivedBy, type CustomerKey } from './utxo-customer';

/** A Core-family node: its wallet pays, blocks go to `minerAddress`. */
export interface CoreNodeState {
  family?: 'core';
  /** litecoind, bitcoind. */
  node?: string;
  rpcUrl: string;
  walletUrl: string;
  minerAddress: string;
}
/** btcd or bchd: no wallet; the customer key is paid by every block. */
export interface BtcdNodeState {
  family: 'btcd';
  node: string;
  rpcUrl: string;
  customer: CustomerKey;
}
export type UtxoNodeState = CoreNodeState | BtcdNodeState;

export interface UtxoDriver {
  /** Pays `amount` base units to `to`; resolves to the txid. */
  pay(to: string, amount: bigint): Promise<string>;
  mine(blocks: number): Promise<void>;
  height(): Promise<number>;
  /** A new address to pay to (the node's wallet's, or a random key's on a wallet-less node). */
  newAddress(): Promise<string>;
  /** Base units at `address`: its unspent outputs (Core: the UTXO set) or all it received (btcd: address index). */
  balance(address: string): Promise<bigint>;
}

export function utxoDriver(network: 'litecoin' | 'bitcoin' | 'bitcoincash', st: UtxoNodeState): UtxoDriver {
  const rpc = new BitcoinRpc(st.rpcUrl, 120_000);
  const height = () => rpc.call<number>('getblockcount');
  if (st.family === 'btcd') {
    if (network === 'litecoin') throw new Error('litecoin runs on litecoind only');
    return {
      pay: (to, amount) => customerPay(rpc, st.customer, to, amount),
      mine: async (blocks) => {
        await rpc.call('generate', [blocks]);
      },
      height,
      newAddress: async () => randomAddress(network),
      balance: (address) => receivedBy(rpc, network, address),
    };
  }
  const wallet = new BitcoinRpc(st.walletUrl, 120_000);
  return {
    pay: (to, amount) => wallet.call<string>('sendtoaddress', [to, fromSats(amount)]),
    mine: (blocks) => mineDurably(rpc, blocks, st.minerAddress),
    height,
    newAddress: () => wallet.call<string>('getnewaddress', ['', 'bech32']),
    async balance(address) {
      const r = await rpc.call<{ total_amount: string }>('scantxoutset', ['start', [`addr(${address})`]]);
      return toSats(r.total_amount);
    },
  };
}
