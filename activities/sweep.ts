import { executeSweeps, type SweepReport, type SweepSelection } from '../src/sweep/execute';
import { listSweepable, type SweepDeps, type SweepFilter, type SweepListing } from '../src/sweep/list';
import { withHeartbeat } from './forward-support';

/** The operator's sweep (`npm run admin -- sweep`), run on the worker where the seed, the nodes and the database are. */
export function createSweepActivities(deps: SweepDeps) {
  return {
    /** The dry run: balances at deposit addresses that no live payment accounts for. Reads only. */
    async sweepList(filter: SweepFilter): Promise<SweepListing> {
      return withHeartbeat(() => listSweepable(deps, filter));
    },
    /** Moves the selected balances; idempotent (a stored sweep is re-sent or settled, never signed again). */
    async sweepExecute(selection: SweepSelection): Promise<SweepReport> {
      return withHeartbeat(() => executeSweeps(deps, selection));
    },
  };
}

export type SweepActivities = ReturnType<typeof createSweepActivities>;
