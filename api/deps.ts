import type { ChainRuntimeConfig } from '../src/chains/config';
import type { HdSeed } from '../src/chains/keys';
import type { Config } from '../src/config';
import type { Db } from '../src/db/client';

/** What the public routes need; built once in src/main.ts. */
export interface PublicDeps {
  db: Db;
  seed: HdSeed;
  chains: ChainRuntimeConfig;
  config: Config;
  /** The callback signer's current RSA public key (PEM), read live; undefined when none is configured. */
  getPublicKeyPem: () => Promise<string | undefined>;
}
