import { Counter, Gauge } from 'prom-client';
import { registry } from './metrics';

/**
 * What operators see of chain access (ops/prometheus/alerts.yml alerts on these). Endpoints are labelled
 * by their position in `{NETWORK}_RPC_URL` ("0", "1", …), never by URL: a URL may carry a credential or a
 * provider's key.
 */
export const endpointHealthy = new Gauge({
  name: 'gateway_rpc_endpoint_healthy',
  help: 'Whether reads and broadcasts go to this RPC endpoint (1) or it is taken out (0), by network and endpoint index',
  labelNames: ['network', 'endpoint'] as const,
  registers: [registry],
});

export const endpointHead = new Gauge({
  name: 'gateway_rpc_endpoint_head',
  help: 'The last head (block height or slot) an RPC endpoint reported, by network and endpoint index',
  labelNames: ['network', 'endpoint'] as const,
  registers: [registry],
});

export const endpointsHealthy = new Gauge({
  name: 'gateway_rpc_healthy_endpoints',
  help: 'RPC endpoints of a network that reads go to',
  labelNames: ['network'] as const,
  registers: [registry],
});

export const endpointRemovals = new Counter({
  name: 'gateway_rpc_endpoint_removals_total',
  help: 'RPC endpoints taken out of reads, by network, endpoint index and reason (stalled, lagging, unreachable)',
  labelNames: ['network', 'endpoint', 'reason'] as const,
  registers: [registry],
});

export const chainHead = new Gauge({
  name: 'gateway_chain_head',
  help: 'The highest head (block height or slot) among a network\'s healthy RPC endpoints',
  labelNames: ['network'] as const,
  registers: [registry],
});

export const chainHeadAge = new Gauge({
  name: 'gateway_chain_head_age_seconds',
  help: 'Wall clock minus the block time of the highest head among a network\'s RPC endpoints',
  labelNames: ['network'] as const,
  registers: [registry],
});

export const watcherCursor = new Gauge({
  name: 'gateway_watcher_cursor',
  help: 'The block height or slot a network\'s watcher has read up to',
  labelNames: ['network'] as const,
  registers: [registry],
});

export const watcherBehind = new Gauge({
  name: 'gateway_watcher_blocks_behind',
  help: 'Blocks (Solana: slots) between the chain head and the watcher\'s cursor',
  labelNames: ['network'] as const,
  registers: [registry],
});

/** Per network and role, how to read the sponsor's balance: read when Prometheus scrapes, not before. */
const sponsors = new Map<string, { network: string; role: string; read: () => Promise<bigint> }>();
const SPONSOR_READ_MS = 5_000;

/**
 * Base units as a gauge's float: exact up to 2^53, enough to compare against an operator's threshold. Read
 * from the node at each scrape (a failed or slow read keeps the last value).
 */
export const sponsorBalance = new Gauge({
  name: 'gateway_sponsor_balance',
  help: 'Balance in base units (wei, lamports) of the account that pays others\' fees: role gas_tank (EVM) or fee_payer (Solana)',
  labelNames: ['network', 'role'] as const,
  registers: [registry],
  async collect() {
    await Promise.all(
      [...sponsors.values()].map(async ({ network, role, read }) => {
        const b = await Promise.race([read(), new Promise<undefined>((r) => setTimeout(() => r(undefined), SPONSOR_READ_MS).unref())]).catch(() => undefined);
        if (b !== undefined) this.set({ network, role }, Number(b));
      }),
    );
  },
});

/** An adapter's sponsor account; the returned function forgets it (the adapter closed). */
export function watchSponsor(network: string, role: 'gas_tank' | 'fee_payer', read: () => Promise<bigint>): () => void {
  const key = `${network}:${role}`;
  const entry = { network, role, read };
  sponsors.set(key, entry);
  return () => {
    if (sponsors.get(key) === entry) sponsors.delete(key);
  };
}

export const sponsorMinimum = new Gauge({
  name: 'gateway_sponsor_balance_minimum',
  help: 'The operator\'s floor for gateway_sponsor_balance ({NETWORK}_SPONSOR_MIN_BALANCE, base units), by network and role',
  labelNames: ['network', 'role'] as const,
  registers: [registry],
});

const bestHeads = new Map<string, bigint>();

export function observeChainHead(network: string, head: bigint, blockTime?: number): void {
  bestHeads.set(network, head);
  chainHead.set({ network }, Number(head));
  if (blockTime !== undefined) chainHeadAge.set({ network }, Math.max(0, Date.now() / 1000 - blockTime));
}

/** After a watcher pass: its cursor, and how far it is behind the best head the endpoints' checks saw. */
export function observeWatcher(network: string, cursor: bigint): void {
  watcherCursor.set({ network }, Number(cursor));
  const best = bestHeads.get(network);
  if (best !== undefined) watcherBehind.set({ network }, Number(best > cursor ? best - cursor : 0n));
}
