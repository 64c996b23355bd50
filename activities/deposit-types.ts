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

/** What the forward activity did: the txid it broadcast (or the node refused), and its first reading when it made one. */
export interface ForwardSent {
  txidOut: string;
  refused?: string;
  fate?: ForwardFate;
}

export type Evaluation = { eligible: true; evidence: boolean } | { eligible: false; reason: string };
