/** The typed errors of the chain adapters (src/chains/adapter.ts); the activities decide by their type. */
export class ChainError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The family cannot do this operation for this network (e.g. BCH forwarding). Permanent. */
export class UnsupportedOperationError extends ChainError {}
/** The deposit cannot pay its own forwarding cost, or an output would be dust. Permanent. */
export class InsufficientAmountError extends ChainError {}
/**
 * The node refused a transaction for a reason other than "already known". A reading about these bytes,
 * not a verdict: a refusal can be a lagging node, or a relay that answered an error after passing them
 * on; only the chain (forwardStatus) decides a forward's fate.
 */
export class BroadcastRejectedError extends ChainError {}
/** A ticker or address this adapter is not configured for. Permanent. */
export class InvalidRequestError extends ChainError {}
/** The node did not answer or answered garbage; worth retrying. */
export class NodeUnavailableError extends ChainError {}
