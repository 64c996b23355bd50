import { sql } from 'drizzle-orm';
import type { Db } from '../src/db/client';
import { loadConfig, type Config } from '../src/config';
import { loadSigner, type Signer } from '../src/callbacks/signer';
import { createDeliveryActivities, type DeliveryDeps } from './delivery';
import { createDepositActivities, type DepositDeps } from './deposit';
import { createMinimumActivities, type MinimumDeps } from './minimums';
import { createSweepActivities } from './sweep';

export interface ActivityDeps {
  db: Db;
  /** Callback settings; unset → read from the environment when a callback is first delivered. */
  config?: DeliveryDeps['config'] & Partial<Config>;
  /** Callback signer (src/callbacks/signer.ts loadSigner); unset → loaded from `config`. */
  signer?: Signer;
  /** Chains, prices and fees for the deposit lifecycle; unset in processes that only deliver callbacks. */
  deposit?: Omit<DepositDeps, 'db'>;
  /** Chains, prices and the operator's rule for the current minimums; unset where no schedule runs. */
  minimums?: Omit<MinimumDeps, 'db'>;
}

/** Every side effect a workflow needs, built from its dependencies (temporalio/samples-typescript style). */
export function createActivities(deps: ActivityDeps) {
  let config = deps.config;
  let signer = deps.signer;
  const deliveryDeps: DeliveryDeps = {
    db: deps.db,
    get config() {
      config ??= loadConfig();
      return config;
    },
    get signer() {
      signer ??= loadSigner({ ...loadConfig(), ...config });
      return signer;
    },
  };
  return {
    async databaseTime(): Promise<string> {
      const rows = await deps.db.execute<{ now: string }>(sql`SELECT now()::text AS now`);
      const list = (Array.isArray(rows) ? rows : (rows as { rows: { now: string }[] }).rows) as { now: string }[];
      return list[0].now;
    },
    ...createDeliveryActivities(deliveryDeps),
    ...(deps.deposit ? createDepositActivities({ db: deps.db, ...deps.deposit }) : {}),
    ...(deps.deposit ? createSweepActivities({ db: deps.db, ...deps.deposit }) : {}),
    ...(deps.minimums ? createMinimumActivities({ db: deps.db, ...deps.minimums }) : {}),
  };
}
