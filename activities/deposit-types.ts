import type { CallbackSnapshot } from '../src/callbacks/types';
import type { ForwardFate } from './forward';

// What the deposit activities (activities/deposit.ts) take and give: the payment workflows' side of them.

/** The workflow's input: an observed deposit matched to a configuration, JSON-safe (amounts as strings). */
export interface DepositInput {
  configId: string;
  network: string;
  ticker: string;
  txid: string;
  index: number;
  recipient: string;
  amount: string;
  blockNumber: string;
  blockHash: string;
  /**
   * Set by the watcher when the deposit was not yet due at the newest block it had read (the block that
   * brings its due height is still to come): the watcher recorded the deposit with its due height before
   * the workflow started, and signals the workflow when a block passes it (src/chains/push.ts). The
   * workflow then waits for that signal instead of making a first confirmations reading that could only
   * say "not yet". Absent (inputs recorded before it, starts by other callers): the first reading is made.
   */
  dueLater?: true;
}

export interface PaymentInfo {
  uuid: string;
  ticker: string;
  network: string;
  notifyPending: boolean;
  requiredConfirmations: number;
  callbackHost: string;
  txidIn: string;
  result: string;
  /** Set once the forward is signed and stored: the workflow never asks for a second signature. */
  txidOut: string | null;
}

/** One reading of a deposit's confirmations (observedAt: the head height of a reorged reading). */
export interface ConfirmationsReading {
  status: 'confirmed' | 'reorged';
  confirmations: number;
  observedAt?: string;
}

/** What the forward activity did: the txid it broadcast (or the node refused), and with `fate` its first reading. */
export interface ForwardSent {
  txidOut: string;
  refused?: string;
  fate?: ForwardFate;
  snapshot?: CallbackSnapshot;
}

/** A confirmations reading, and the forward's first attempt when the reading found the deposit final. */
export interface DueReading {
  reading: ConfirmationsReading;
  forward?: { sent: ForwardSent } | { error: string };
}

export type Evaluation = { eligible: true; evidence: boolean } | { eligible: false; reason: string };
