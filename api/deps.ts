import type { ChainRuntimeConfig } from '../src/chains/config';
import type { PublicMaterial } from '../src/addresses/public-material';
import type { Config } from '../src/config';
import type { Db } from '../src/db/client';
import type { AssetStateCache } from './asset-cache';
import type { LogsCache } from './logs-cache';

/** What the public routes need; built once in src/main.ts. */
export interface PublicDeps {
  db: Db;
  /** Deposit addresses from public material only (xpubs, the Solana pool): the API holds no seed. */
  addresses: Pick<PublicMaterial, 'depositAddresses'>;
  chains: ChainRuntimeConfig;
  config: Config;
  /** The callback signer's current RSA public key (PEM), read live; undefined when none is configured. */
  getPublicKeyPem: () => Promise<string | undefined>;
  /** The production API's asset state, read at most once a second (api/asset-cache.ts); absent: read per request. */
  assetCache?: AssetStateCache;
  /** GET /logs bodies kept while the database says they are unchanged (api/logs-cache.ts); absent: read per request. */
  logsCache?: LogsCache;
}
