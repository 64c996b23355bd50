import type { Db } from '../src/db/client';
import { settleReplacedChain } from '../src/db/queries/chain-reset';

export const CHAIN_RESET_REASON = 'local chain reset: the devnet restarted without this chain\'s state, so the deposit no longer exists';

/**
 * After `npm start` comes back with a new local chain for a network (surfnet keeps none; anvil's state
 * may be lost), the gateway says so and settles what can no longer happen, instead of letting each
 * waiting deposit be read as reorged one by one: payments of that network still pending or processing
 * are marked failed with the reason above, and the watcher's cursor of the network is dropped so that
 * it starts at the new chain's head. Returns the lines to print (none when nothing was waiting).
 */
export async function settleNewLocalChains(db: Db, networks: string[]): Promise<string[]> {
  const lines: string[] = [];
  for (const network of networks) {
    const failed = await settleReplacedChain(db, network, CHAIN_RESET_REASON);
    lines.push(
      `local ${network} chain is new (the devnet kept no state of it across the restart)` +
        (failed ? `: ${failed} payment(s) waiting on the old chain marked failed ("local chain reset")` : ''),
    );
  }
  return lines;
}
