// The operator's `npm run admin -- sweep` (src/sweep/), run where the seed and the database are (the worker).
// The result carries amounts, addresses and txids only, never a signed transaction.
import { proxyActivities } from '@temporalio/workflow';
import type { SweepActivities } from '../activities/sweep';
import type { SweepReport, SweepSelection } from '../src/sweep/execute';
import type { SweepFilter, SweepListing } from '../src/sweep/list';

// One attempt: the operator runs it again, which re-sends or settles whatever a run stored.
const { sweepList, sweepExecute } = proxyActivities<SweepActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
});

export type SweepInput = { execute: false; filter: SweepFilter } | { execute: true; selection: SweepSelection };

export async function sweep(input: SweepInput): Promise<SweepListing | SweepReport> {
  return input.execute ? sweepExecute(input.selection) : sweepList(input.filter);
}
