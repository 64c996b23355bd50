// SPEC 2.1, 2.2, 8: the current processing minimums. minimumRefresh is what the `minimum-refresh` Temporal
// Schedule starts every MINIMUM_REFRESH_MS (visible and pausable in the Temporal UI); minimumPin is the
// operator's `npm run admin -- minimum set|clear`, run where the database is (the worker).
import { proxyActivities } from '@temporalio/workflow';
import type { MinimumActivities, RefreshReport } from '../activities/minimums';

// One attempt: the schedule's next run is the retry, and a stale figure is shown as null meanwhile.
const { refreshMinimums } = proxyActivities<MinimumActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 1 },
});

const { pinMinimum } = proxyActivities<MinimumActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

/** Recomputes every served asset's minimum; the report (figures and reasons) shows in the run's result. */
export async function minimumRefresh(): Promise<RefreshReport> {
  return refreshMinimums();
}

/** Pins (value set) or unpins (value null) one asset's minimum. */
export async function minimumPin(input: { ticker: string; value: string | null }): Promise<{ ticker: string; pinned: string | null }> {
  return pinMinimum(input);
}
