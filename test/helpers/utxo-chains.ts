import type { ObservedDeposit } from '../../src/chains/adapter';
import type { HdSeed } from '../../src/chains/keys';
import { UtxoAdapter } from '../../src/chains/utxo/adapter';
import { BitcoinRpc, RpcError } from '../../src/chains/utxo/rpc';
import { bitcoinCashNode, bitcoinNode } from '../../devnet/binaries';
import { startUtxoDevnets } from '../../devnet/utxo-devnets';
import { utxoDriver } from '../../devnet/utxo-drive';
import { tmpDir, type LiveChain } from './nodes';

const TICKER = { bitcoin: 'btc', bitcoincash: 'bch' } as const;

/**
 * The local Bitcoin (Knots or btcd) or Bitcoin Cash (bchd) node, as the devnets start it, driven through
 * the same driver `npm run devnet` uses. Required in tests: `npm run devnet -- install` (and so .ci/run
 * and the test prerequisites) installs it; a missing one is a clear failure, never a skip.
 */
export async function requiredUtxoChain(network: 'bitcoin' | 'bitcoincash', seed: HdSeed): Promise<LiveChain> {
  const cmd = network === 'bitcoin' ? bitcoinNode() : bitcoinCashNode();
  if (!cmd) throw new Error(`no local ${network} node is installed: npm run devnet -- install (.ci/run runs it)`);
  const nets = await startUtxoDevnets(tmpDir(`gw-${TICKER[network]}-`), { litecoin: false, bitcoin: false, bitcoincash: false, [network]: true, blockIntervalMs: 0 });
  const state = nets.states[network]!;
  const drive = utxoDriver(network, state);
  const rpc = new BitcoinRpc(state.rpcUrl, 120_000);
  const adapter = new UtxoAdapter({ network, mode: 'regtest', rpcUrl: state.rpcUrl, seed });
  // Core-family nodes mine each call to a fresh wallet address: after invalidateblock an identical block
  // (same parent, transactions, coinbase and second) would be the invalidated one again and be refused.
  // btcd/bchd put a random extra nonce in every coinbase.
  const mine = async (n: number) => {
    if (state.family === 'btcd') return drive.mine(n);
    await rpc.call('generatetoaddress', [n, await drive.newAddress()]);
  };
  let orphanedRaw = '';
  return {
    name: `${cmd.name} regtest ${TICKER[network]}`,
    ticker: TICKER[network],
    amount: 50_000_000n,
    adapter,
    pay: (to, amount) => drive.pay(to, amount),
    advance: () => mine(2),
    mine,
    freshAddressOut: () => drive.newAddress(),
    balanceOf: (address) => drive.balance(address),
    reorg: {
      checkpoint: async () => '',
      async undo(_cp, deposit: ObservedDeposit) {
        orphanedRaw = await rpc.call<string>('getrawtransaction', [deposit.txid, 0]);
        await rpc.call('invalidateblock', [deposit.blockHash]);
      },
      // Core's mempool takes the orphaned transaction back by itself; the same bytes are offered again in
      // case a node did not (an "already have it" answer is fine).
      async reinclude() {
        try {
          await rpc.call('sendrawtransaction', [orphanedRaw]);
        } catch (e) {
          if (!(e instanceof RpcError)) throw e;
        }
      },
    },
    pids: nets.pids,
    async stop() {
      await adapter.close();
      await nets.stop();
    },
  };
}
