import { discardForwardIf } from '../src/db/queries/forwards';
import type { DepositDeps } from './deposit-types';
import { forwardFate } from './forward-fate';
import { sendForward, type Broadcast, type LoadedPayment } from './forward-send';
export type { ForwardFate } from './deposit-types';
export type { Broadcast, LoadedPayment } from './forward-send';

export interface ForwardOptions {
  /** The caller watches for the inclusion of a forward signed now, for deps.heads' window (forward_watch_until). */
  watch?: boolean;
}

/** The forward stage of the deposit lifecycle (DESIGN 4): sign once, store, broadcast, and read its fate. */
export function createForwardActivities(deps: DepositDeps) {
  return {
    /** Signs and broadcasts the forward (forward-send.ts). Idempotent: a stored forward is re-sent, never signed twice. */
    async forward(uuid: string, opts: ForwardOptions = {}, loaded?: LoadedPayment): Promise<Broadcast> {
      return sendForward(deps, uuid, loaded, opts.watch === true);
    },

    /** One reading of the stored forward's fate (forward-fate.ts). */
    forwardFate: (uuid: string) => forwardFate(deps, uuid),

    /**
     * Forgets a stored forward that the chain says can never land (and moved nothing), so the next
     * forward() signs anew. Only the named txid is cleared: a plan stored meanwhile is kept.
     */
    async discardForward(uuid: string, txidOut: string): Promise<boolean> {
      return discardForwardIf(deps.db, uuid, txidOut);
    },
  };
}
