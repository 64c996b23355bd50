import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../../src/db/client';
import type { CallbackSnapshot } from '../../../src/callbacks/types';
import { payments } from '../../../src/db/schema';

/** A payment the scripted chain knows: its snapshots and whether it waits for `confirm`. */
export interface Deposit {
  paymentUuid: string;
  /** The pending stage's snapshot: the merchant asked for pending=1. */
  pending?: CallbackSnapshot;
  /** The confirmed snapshot; final at once unless awaitConfirmed (then `confirm` makes it final). */
  confirmed?: CallbackSnapshot;
  awaitConfirmed?: boolean;
  resendWindow?: string;
}
/**
 * The chain and forward activities of the payment workflow, scripted per payment for the delivery tests
 * (test/callbacks/delivery-workflow.test.ts): a deposit is final when the test says so; the database moves
 * as the real activities would move it.
 */
export function scriptedChain(db: () => Db) {
  /** Per payment: its deposit and whether the scripted chain calls it final yet. */
  const deposits = new Map<string, Deposit & { final: boolean }>();
  const payment = (txid: string) => {
    const d = deposits.get(txid)!;
    return {
      uuid: d.paymentUuid, ticker: 'btc', network: 'bitcoin', notifyPending: d.pending !== undefined, requiredConfirmations: 1,
      callbackHost: '127.0.0.1', txidIn: txid, result: 'pending', txidOut: null,
    };
  };
  const fate = (uuid: string) => ({ status: 'confirmed', txidOut: `out-${uuid}` });
  const processing = (uuid: string) => db().update(payments).set({ result: 'processing' }).where(and(eq(payments.uuid, uuid), eq(payments.result, 'pending')));
  const chain = {
    recordAndEvaluate: async (input: { txid: string }) => ({ payment: payment(input.txid), evaluation: { eligible: true, evidence: true } }),
    pendingSnapshot: async (uuid: string) => deposits.get(uuid)!.pending!,
    confirmations: async (uuid: string) => ({ status: 'confirmed', confirmations: deposits.get(uuid)!.final ? 1 : 0 }),
    markFailed: async () => true,
    recordProcessing: async (uuid: string) => {
      await processing(uuid);
      return true;
    },
    // Like the real one, it records processing first; its own first reading finds it mined at once.
    forward: async (uuid: string) => {
      await processing(uuid);
      return { txidOut: `out-${uuid}`, fate: fate(uuid) };
    },
    forwardFate: async (uuid: string) => fate(uuid),
    // Like the real one: the snapshot is written once with the move to sent.
    confirmedSnapshot: async (uuid: string) => {
      const snapshot = deposits.get(uuid)!.confirmed ?? deposits.get(uuid)!.pending!;
      await db().update(payments).set({ result: 'sent', snapshot }).where(and(eq(payments.uuid, uuid), isNull(payments.snapshot)));
      return snapshot;
    },
  };
  return { chain, deposits };
}
