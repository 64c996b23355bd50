import type { ChainAdapter } from '../src/chains/adapter';
import type { Db } from '../src/db/client';
import type { HeadWatch } from '../src/detection/heads';
import type { FeePolicy } from '../src/domain/fees';
import type { PriceSource } from '../src/prices/source';

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

export interface DepositDeps {
  db: Db;
  /** Cross-process lock by name (Database.withLock). */
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
  adapter(network: string): Promise<ChainAdapter>;
  prices: PriceSource;
  feePolicy: FeePolicy;
  /** Where a UTXO forward sends the commission (the operator's own address on that network). */
  treasuryAddress(network: string): string | undefined;
  /** The worker's head feeds: a forward signed now is watched for at each new head, for a short window. */
  heads?: HeadWatch;
}

/**
 * One reading of a stored forward's fate, made once and acted on by the workflow as it stands
 * (observedAt: the block height of a `replaceable` reading, as a string).
 */
export type ForwardFate =
  | { status: 'confirmed'; txidOut: string }
  | { status: 'pending'; txidOut: string; note?: string }
  | { status: 'failed'; txidOut: string; reason: string }
  | { status: 'replaceable'; txidOut: string; reason: string; observedAt: string };
