// `npm run admin -- sweep --execute`: moves the selected balances of the dry run (src/sweep/list.ts) to the
// treasury or to the configuration's address_out. Each sweep is signed once under its address's forward lock,
// stored (the sweeps ledger) before it is broadcast, and a later run re-sends the stored bytes or records
// their fate: never a second signature while one is open (DESIGN 4).
import { BroadcastRejectedError, InsufficientAmountError, InvalidRequestError, NodeUnavailableError, type ChainAdapter, type ForwardPlan } from '../chains/adapter';
import { readCursor } from '../db/queries/watch';
import { nonceFloor } from '../db/queries/forwards';
import { hasLivePayment, noteSweep, openSweep, openSweeps, restoreSweepPlan, settleSweep, storeSweepOnce, type SweepRow } from '../db/queries/sweeps';
import { planFromJson, planToJson } from '../chains/plan-json';
import { depositAddresses, tickersOf, type DepositAddress, type SweepDeps, type SweepFilter } from './list';

export interface SweepSelection extends SweepFilter {
  to: 'treasury' | 'address_out';
}

/** One sweep as this run left it (amounts in base units as strings). */
export interface SweepMove {
  network: string;
  ticker: string;
  addressIn: string;
  destination: string;
  txid: string;
  amount: string;
  fee: string;
  /** confirmed: mined; pending: sent (or re-sent) and not mined yet; failed: reverted on chain; dropped: can never land. */
  status: 'confirmed' | 'pending' | 'failed' | 'dropped';
  /** This run signed it (else it re-read or re-sent one stored by an earlier run). */
  signedNow: boolean;
  note?: string;
}

export interface SweepReport {
  moves: SweepMove[];
  skipped: Array<{ network: string; addressIn: string; ticker?: string; why: string }>;
}

/**
 * Settles or re-sends the open sweeps of the selection first (whatever the balances are now), then sweeps each
 * selected balance: under the address's forward lock, only when no payment to it is live, at most what had
 * arrived by the block the watcher has read.
 */
export async function executeSweeps(deps: SweepDeps, selection: SweepSelection): Promise<SweepReport> {
  const report: SweepReport = { moves: [], skipped: [] };
  const addresses = await depositAddresses(deps.db, selection);
  const selected = (network: string, source: string, ticker: string) =>
    (!selection.network || selection.network === network) &&
    (!selection.tickers || selection.tickers.includes(ticker)) &&
    addresses.some((a) => a.network === network && a.addressIn === source);
  const settled = new Set<string>();
  for (const open of await openSweeps(deps.db)) {
    if (!selected(open.network, open.source, open.ticker)) continue;
    await stillOpen(deps, open.network, open.source, open.ticker, open.txid, async (adapter) => {
      const move = await resume(deps, adapter, open);
      report.moves.push(move);
      // A sweep that can never land frees its source and asset for a new one in this run.
      if (move.status !== 'dropped') settled.add(`${open.network}:${open.source}:${open.ticker}`);
    });
  }
  for (const address of addresses) {
    // Read again under the lock before each sweep; here, the address is left out once, not once per asset.
    if (await hasLivePayment(deps.db, address.network, address.addressIn)) {
      report.skipped.push({ network: address.network, addressIn: address.addressIn, why: LIVE });
      continue;
    }
    const adapter = await deps.adapter(address.network);
    for (const ticker of tickersOf(address.network, selection)) {
      if (settled.has(`${address.network}:${address.addressIn}:${ticker}`)) continue;
      await deps.withLock(`forward:${address.network}:${address.addressIn}`, () => sweepOne(deps, adapter, address, ticker, selection, report));
    }
  }
  await awaitFates(deps, report);
  return report;
}

/** Runs `fn` under the address's forward lock if the sweep `txid` is still the open one (read again under the lock). */
async function stillOpen(deps: SweepDeps, network: string, source: string, ticker: string, txid: string, fn: (adapter: ChainAdapter, row: SweepRow) => Promise<void>): Promise<void> {
  const adapter = await deps.adapter(network);
  await deps.withLock(`forward:${network}:${source}`, async () => {
    const row = await openSweep(deps.db, network, source, ticker);
    if (row?.txid === txid) await fn(adapter, row);
  });
}

const FATE_POLL_MS = 500;

/**
 * Reads the fate of each sweep this run left pending again, under its address's lock, until it is mined or
 * `fateWaitMs` has passed: the operator sees what the chain did, not the moment after the broadcast. One the node
 * does not know (refused, or dropped) is left to the next run at once.
 */
async function awaitFates(deps: SweepDeps, report: SweepReport): Promise<void> {
  const deadline = Date.now() + (deps.fateWaitMs ?? 30_000);
  let waiting = report.moves.flatMap((m, i) => (m.status === 'pending' ? [i] : []));
  while (waiting.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, FATE_POLL_MS));
    const next: number[] = [];
    for (const i of waiting) {
      const m = report.moves[i];
      await stillOpen(deps, m.network, m.addressIn, m.ticker, m.txid, async (adapter, row) => {
        const s = await adapter.forwardStatus(planFromJson(row.plan));
        // Still pending: the move stays as the run reported it (with why a refused one was not accepted).
        if (s.status === 'pending') return void (s.known !== false && next.push(i));
        report.moves[i] = await record(deps, row, s, m.signedNow);
      });
    }
    waiting = next;
  }
}

const LIVE = 'a payment to this address is live';

const moveOf = (row: SweepRow, status: SweepMove['status'], signedNow: boolean, note?: string): SweepMove => ({
  network: row.network, ticker: row.ticker, addressIn: row.source, destination: row.destination, txid: row.txid,
  amount: row.amount, fee: row.fee, status, signedNow, ...(note ? { note } : {}),
});

/** One balance, under its address's forward lock. */
async function sweepOne(deps: SweepDeps, adapter: ChainAdapter, address: DepositAddress, ticker: string, selection: SweepSelection, report: SweepReport): Promise<void> {
  const { network, addressIn } = address;
  const skip = (why: string) => void report.skipped.push({ network, addressIn, ticker, why });
  // An open sweep (stored by a run that stopped after the check above) is resumed, never signed again.
  const open = await openSweep(deps.db, network, addressIn, ticker);
  if (open) return void report.moves.push(await resume(deps, adapter, open));
  if (await hasLivePayment(deps.db, network, addressIn)) return skip(LIVE);
  if (!adapter.balanceOf || !adapter.prepareSweep) return skip('the adapter cannot sweep');
  const cursor = await readCursor(deps.db, network);
  if (!cursor) return skip("the network's watcher has not read a block yet");
  let balance: bigint | null;
  try {
    balance = await adapter.balanceOf(addressIn, ticker, cursor.height);
  } catch (e) {
    if (e instanceof InvalidRequestError) return; // a token without a configured contract or mint
    throw e;
  }
  if (balance === null) return skip('a transaction touched it after the block the watcher has read; run again shortly');
  if (balance === 0n) return;
  const destination = selection.to === 'treasury' ? deps.treasuryAddress(network) : address.addressOut;
  if (!destination) return skip(selection.to === 'treasury' ? 'no treasury address for this network' : 'the configurations at this address name different address_out');
  let plan: ForwardPlan;
  try {
    plan = await adapter.prepareSweep({
      ticker, derivationIndex: address.derivationIndex, source: addressIn, destination, maxBalance: balance, nonceFloor: await nonceFloor(deps.db, network, addressIn),
    });
  } catch (e) {
    if (e instanceof InsufficientAmountError) return skip(`not worth moving: ${e.message}`);
    throw e;
  }
  const stored = await storeSweepOnce(deps.db, {
    txid: plan.txidOut, network, ticker, source: addressIn, destination, amount: plan.forwarded, fee: plan.networkFee + plan.sponsorCost, plan: planToJson(plan), nonce: plan.nonce,
  });
  const row = await openSweep(deps.db, network, addressIn, ticker);
  if (!row) throw new Error(`sweep of ${ticker} at ${addressIn} neither stored nor open`);
  report.moves.push(await send(deps, adapter, row, stored));
}

/** Broadcasts a stored sweep's bytes and reads its fate once. */
async function send(deps: SweepDeps, adapter: ChainAdapter, row: SweepRow, signedNow: boolean): Promise<SweepMove> {
  const plan = planFromJson(row.plan);
  try {
    await adapter.broadcast(plan, { onPlanChange: (next) => restoreSweepPlan(deps.db, row.txid, planToJson(next)) });
  } catch (e) {
    if (!(e instanceof BroadcastRejectedError || e instanceof NodeUnavailableError)) throw e;
    // A reading, not a verdict: the next run reads the chain and re-sends.
    await noteSweep(deps.db, row.txid, { reason: e.message });
    return moveOf(row, 'pending', signedNow, `not accepted yet: ${e.message}`);
  }
  return settle(deps, adapter, row, signedNow);
}

/** One reading of a stored sweep's fate, recorded; an unknown one is sent again (the same bytes). */
async function resume(deps: SweepDeps, adapter: ChainAdapter, row: SweepRow): Promise<SweepMove> {
  const s = await adapter.forwardStatus(planFromJson(row.plan));
  if (s.status === 'pending' && s.known === false) return send(deps, adapter, row, false);
  return record(deps, row, s, false);
}

async function settle(deps: SweepDeps, adapter: ChainAdapter, row: SweepRow, signedNow: boolean): Promise<SweepMove> {
  return record(deps, row, await adapter.forwardStatus(planFromJson(row.plan)), signedNow);
}

async function record(deps: SweepDeps, row: SweepRow, s: Awaited<ReturnType<ChainAdapter['forwardStatus']>>, signedNow: boolean): Promise<SweepMove> {
  switch (s.status) {
    case 'confirmed':
      await settleSweep(deps.db, row.txid, 'confirmed');
      return moveOf(row, 'confirmed', signedNow);
    case 'failed':
      await settleSweep(deps.db, row.txid, 'failed', s.reason);
      return moveOf(row, 'failed', signedNow, s.reason);
    case 'replaceable':
      // DESIGN 4's evidence rule: a second reading at a later block before the bytes are given up.
      if (row.replaceableAt !== null && s.observedAt > row.replaceableAt) {
        await settleSweep(deps.db, row.txid, 'dropped', s.reason);
        return moveOf(row, 'dropped', signedNow, s.reason);
      }
      await noteSweep(deps.db, row.txid, { replaceableAt: s.observedAt, reason: s.reason });
      return moveOf(row, 'pending', signedNow, `${s.reason}; given up once a later block says so again`);
    case 'pending':
      return moveOf(row, 'pending', signedNow, s.note);
  }
}
