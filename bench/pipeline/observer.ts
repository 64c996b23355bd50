import { jsonRpc } from '../../src/chains/json-rpc';
import type { DevnetState } from '../../devnet';
import { BitcoinRpc } from '../../src/chains/utxo/rpc';

/**
 * When each block became visible, on this machine's clock (the clock the callbacks arrive on): every
 * `everyMs` the observer asks each node directly (never through the gateway) for its head, and notes the
 * first moment each new height was seen. Block timestamps on chain are whole seconds (anvil, litecoind,
 * Solana's blockTime), too coarse against 1 s blocks and 200 ms slots; this is the payer's view of
 * "mined", to within one poll. Series: ethereum (latest), litecoin (best), solana (confirmed slot) and
 * solana-finalized (the finalized slot: a Solana deposit is final when it reaches its slot).
 */
export type Series = 'ethereum' | 'litecoin' | 'solana' | 'solana-finalized';

interface Sample {
  height: number;
  at: number;
}

export interface Observer {
  /** First moment the series' head was at or past `height`; undefined if not seen yet. */
  seenAt(series: Series, height: number): number | undefined;
  /** Polls that failed or came late (> 1 s) per series: a loaded machine shows here. */
  misses(): Record<Series, number>;
  stop(): Promise<void>;
}

export function startObserver(state: DevnetState, everyMs = 100): Observer {
  const samples: Record<Series, Sample[]> = { ethereum: [], litecoin: [], solana: [], 'solana-finalized': [] };
  const missed: Record<Series, number> = { ethereum: 0, litecoin: 0, solana: 0, 'solana-finalized': 0 };
  const ltc = state.litecoin ? new BitcoinRpc(state.litecoin.rpcUrl, 5000) : undefined;
  const heads: Partial<Record<Series, () => Promise<number>>> = {};
  if (state.ethereum) heads.ethereum = async () => Number(BigInt(await jsonRpc<string>(state.ethereum!.rpcUrl, 'eth_blockNumber')));
  if (state.solana) {
    heads.solana = () => jsonRpc<number>(state.solana!.rpcUrl, 'getSlot', [{ commitment: 'confirmed' }]);
    heads['solana-finalized'] = () => jsonRpc<number>(state.solana!.rpcUrl, 'getSlot', [{ commitment: 'finalized' }]);
  }
  if (ltc) heads.litecoin = () => ltc.call<number>('getblockcount');

  let stopped = false;
  const loops = Object.entries(heads).map(async ([name, head]) => {
    const series = name as Series;
    while (!stopped) {
      const asked = Date.now();
      try {
        const h = await head();
        const list = samples[series];
        // The answer is stamped with the moment it came back: the block existed by then.
        if (list.length === 0 || h > list[list.length - 1].height) list.push({ height: h, at: Date.now() });
        if (Date.now() - asked > 1000) missed[series]++;
      } catch {
        missed[series]++;
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  });

  return {
    seenAt(series, height) {
      const list = samples[series];
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (list[mid].height >= height) hi = mid;
        else lo = mid + 1;
      }
      return lo < list.length ? list[lo].at : undefined;
    },
    misses: () => ({ ...missed }),
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
