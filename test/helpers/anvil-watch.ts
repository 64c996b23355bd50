import { JsonRpcProvider, Network } from 'ethers';
import type { Db } from '../../src/db/client';
import { startAnvil, type AnvilDevnet } from '../../devnet/anvil';
import { createAdapterRegistry } from '../../src/chains/factory';
import { createTestDatabase } from './db';
import { testSeed, tmpDir } from './nodes';

/** A watcher's world for a test file: a test database, a live anvil, the adapters of its network, and a provider for payments. */
export interface AnvilWatchBed {
  database: Awaited<ReturnType<typeof createTestDatabase>>;
  /** The test database's own handle. */
  db: Db;
  node: AnvilDevnet;
  registry: ReturnType<typeof createAdapterRegistry>;
  provider: JsonRpcProvider;
  close(): Promise<void>;
}

/** Starts the database and anvil side by side (`dirPrefix` names anvil's directory). */
export async function anvilWatchBed(dirPrefix: string): Promise<AnvilWatchBed> {
  const [db, anvil] = await Promise.allSettled([createTestDatabase(), startAnvil({ dir: tmpDir(dirPrefix) })]);
  if (db.status === 'rejected' || anvil.status === 'rejected') {
    // What did start is stopped: a lingering anvil would keep jest from exiting after a failed set-up.
    if (db.status === 'fulfilled') await db.value.drop().catch(() => undefined);
    if (anvil.status === 'fulfilled') await anvil.value.stop().catch(() => undefined);
    throw db.status === 'rejected' ? db.reason : (anvil as PromiseRejectedResult).reason;
  }
  const [database, node] = [db.value, anvil.value];
  const registry = createAdapterRegistry({ ethereum: { mode: 'regtest', rpcUrl: node.rpcUrl, contracts: node.tokens } }, testSeed());
  const provider = new JsonRpcProvider(node.rpcUrl, Network.from(node.chainId), { staticNetwork: true, cacheTimeout: -1 });
  return {
    database, db: database.db, node, registry, provider,
    async close() {
      await registry.close();
      provider.destroy();
      await database.drop();
      await node.stop();
    },
  };
}
