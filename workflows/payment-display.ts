// What the Temporal UI shows of a payment run: its search attributes (identity and stage) and, while its
// forward waits, the reason in the workflow's current details (no history event).
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { SA_CALLBACK_HOST, SA_PAYMENT_UUID, SA_STAGE, SA_TICKER, SA_TXID_IN } from '../src/domain/search-attributes';
import type { Carry } from './payment-carry';

/** The stage the UI shows: `waiting` while a transient condition holds the forward back (GatewayStage = "waiting" lists them). */
function visibleStage(c: Carry): string {
  return c.state === 'observed' ? 'pending' : c.state === 'processing' && c.forward.waiting ? 'waiting' : c.state;
}

/**
 * Returns `show`, which brings the UI up to the run's state. The search attributes are written once with
 * the first stage (with the identity, in every run), and then only when the stage shown changes. `sent` is
 * written only when the confirmed stage has to wait (an attempt failed) or ends without delivery: a first
 * attempt that gets HTTP 200 moves on to `done` in the same workflow task, and one write of `done` shows it
 * (the caller does not show `sent` on its way there). `searchAttributes: false` writes none (a namespace
 * without the gateway's attributes would fail every task).
 */
export function stageDisplay(c: Carry, searchAttributes = true): () => void {
  const attributes = searchAttributes ? upsertSearchAttributes : () => undefined;
  const identity: SearchAttributeUpdatePair[] = [
    { key: SA_TICKER, value: c.payment.ticker },
    { key: SA_CALLBACK_HOST, value: c.payment.callbackHost },
    { key: SA_PAYMENT_UUID, value: c.payment.uuid },
    { key: SA_TXID_IN, value: c.payment.txidIn },
  ];
  let detailsShown = '';
  const showDetails = () => {
    const w = c.state === 'processing' ? c.forward.waiting : null;
    const details = w ? `forward waiting since ${w.since} (${w.retries} tries), next try ${w.nextTry}: ${w.type}: ${w.reason}` : '';
    if (details !== detailsShown) setCurrentDetails(details);
    detailsShown = details;
  };
  /** The stage the search attributes show: undefined before the first write. */
  let stageShown: string | undefined;
  return () => {
    showDetails();
    const stage = visibleStage(c);
    if (stage === stageShown) return;
    attributes(stageShown === undefined ? [...identity, { key: SA_STAGE, value: stage }] : [{ key: SA_STAGE, value: stage }]);
    stageShown = stage;
  };
}
