// The dry run of `npm run admin -- sweep`: what sits at deposit addresses of account chains (EVM, Solana) that
// no live payment accounts for, read from the nodes, with why it is there and totals per asset.
import { InvalidRequestError, type ChainAdapter } from '../chains/adapter';
import { readCursor } from '../db/queries/watch';
import type { Db } from '../db/client';
import { LIVE_RESULTS, depositConfigs, paymentTallies, type PaymentTally } from '../db/queries/sweeps';
import { ASSETS, NETWORKS } from '../domain/assets';

export interface SweepDeps {
  db: Db;
  /** Cross-process lock by name (Database.withLock): a sweep holds the forward lock of its address. */
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
  adapter(network: string): Promise<ChainAdapter>;
  /** The operator's own address per network (TREASURY_INDEX of the seed). */
  treasuryAddress(network: string): string | undefined;
  /** How long execute waits for the sweeps it sent to be mined before it reports them pending (default 30 s). */
  fateWaitMs?: number;
}

/**
 * Why a balance is there. commission: payments of the asset were forwarded from it (account chains leave the
 * commission at address_in); failed / below-minimum: deposits that ended so; gas-left: ether of token
 * forwards' top-ups that their transfers did not burn; unaccounted: no payment of the asset explains it
 * (another asset of the family, or a deposit of an asset the configuration does not take).
 */
export type SweepWhy = 'commission' | 'failed' | 'below-minimum' | 'gas-left' | 'unaccounted';

export interface SweepFilter {
  network?: string;
  tickers?: string[];
  addresses?: string[];
}

/** One balance at one deposit address. Amounts are base units as decimal strings (a workflow's result is JSON). */
export interface SweepBalance {
  network: string;
  ticker: string;
  addressIn: string;
  derivationIndex: string;
  /** The configuration's address_out; null when the configurations at this address name different ones. */
  addressOut: string | null;
  amount: string;
  why: SweepWhy[];
}

/** An address (and asset) left out, with the reason. */
export interface SweepSkip {
  network: string;
  addressIn: string;
  ticker?: string;
  why: string;
}

export interface SweepListing {
  balances: SweepBalance[];
  skipped: SweepSkip[];
  totals: Array<{ ticker: string; amount: string; addresses: number }>;
}

/** A deposit address of one network with the configurations that use it. */
export interface DepositAddress {
  network: string;
  addressIn: string;
  derivationIndex: bigint;
  addressOut: string | null;
  configIds: string[];
}

const ACCOUNT_FAMILIES = new Set(['evm', 'sol']);

/** The address families (payment_configs.family) of account-chain networks. */
const accountFamilies = () => [...new Set(Object.values(NETWORKS).filter((n) => ACCOUNT_FAMILIES.has(n.family)).map((n) => n.addressFamily))];

/** The deposit addresses of account-chain networks (payment_configs.address_in), each once per network. */
export async function depositAddresses(db: Db, filter: SweepFilter = {}): Promise<DepositAddress[]> {
  const byKey = new Map<string, DepositAddress>();
  for (const c of await depositConfigs(db, accountFamilies())) {
    const network = ASSETS[c.ticker]?.network;
    if (!network || (filter.network && network !== filter.network)) continue;
    if (filter.addresses && !filter.addresses.some((a) => a.toLowerCase() === c.addressIn.toLowerCase())) continue;
    const key = `${network}:${c.addressIn}`;
    const known = byKey.get(key);
    if (!known) {
      byKey.set(key, { network, addressIn: c.addressIn, derivationIndex: c.derivationIndex, addressOut: c.addressOut, configIds: [c.id] });
      continue;
    }
    known.configIds.push(c.id);
    if (known.addressOut !== c.addressOut) known.addressOut = null;
  }
  return [...byKey.values()];
}

/** The assets of a network the sweep reads: its native coin and every token of the registry (an unconfigured one is skipped). */
export function tickersOf(network: string, filter: SweepFilter = {}): string[] {
  return Object.values(ASSETS)
    .filter((a) => a.network === network && (!filter.tickers || filter.tickers.includes(a.ticker)))
    .map((a) => a.ticker);
}

/** Why a balance of `ticker` sits at an address, from the counts of its payments (all tickers of the address). */
export function whyOf(ticker: string, tallies: PaymentTally[]): SweepWhy[] {
  const why = new Set<SweepWhy>();
  const native = NETWORKS[ASSETS[ticker].network].nativeTicker === ticker;
  for (const t of tallies) {
    const forwarded = t.result === 'sent' || t.result === 'done';
    if (t.ticker === ticker) {
      if (forwarded) why.add('commission');
      if (t.result === 'failed') why.add(t.below ? 'below-minimum' : 'failed');
    } else if (native && forwarded && NETWORKS[t.network].family === 'evm') {
      why.add('gas-left');
    }
  }
  if (why.size === 0) why.add('unaccounted');
  return [...why];
}

/**
 * Every balance at a deposit address that no live payment accounts for. An address with a live payment
 * (LIVE_RESULTS: a deposit recorded and not yet forwarded) is left out whole. Balances are what arrived
 * up to the block the network's watcher has read (every deposit up to there is recorded: the watcher
 * records a block's deposits before its cursor passes it); a network whose watcher has not started is left out.
 */
export async function listSweepable(deps: SweepDeps, filter: SweepFilter = {}): Promise<SweepListing> {
  const addresses = await depositAddresses(deps.db, filter);
  const tallies = addresses.length === 0 ? [] : await paymentTallies(deps.db, accountFamilies());
  const talliesOf = new Map<string, PaymentTally[]>();
  for (const t of tallies) talliesOf.set(t.configId, [...(talliesOf.get(t.configId) ?? []), t]);
  const balances: SweepBalance[] = [];
  const skipped: SweepSkip[] = [];
  const cursors = new Map<string, bigint | null>();
  for (const address of addresses) {
    const { network, addressIn } = address;
    const own = address.configIds.flatMap((id) => talliesOf.get(id) ?? []).filter((t) => t.network === network);
    if (own.some((t) => (LIVE_RESULTS as readonly string[]).includes(t.result))) {
      skipped.push({ network, addressIn, why: 'a payment to this address is live' });
      continue;
    }
    if (!cursors.has(network)) cursors.set(network, (await readCursor(deps.db, network))?.height ?? null);
    const seenUpTo = cursors.get(network)!;
    if (seenUpTo === null) {
      skipped.push({ network, addressIn, why: "the network's watcher has not read a block yet" });
      continue;
    }
    let adapter: ChainAdapter;
    try {
      adapter = await deps.adapter(network);
    } catch (e) {
      skipped.push({ network, addressIn, why: `no adapter: ${(e as Error).message}` });
      continue;
    }
    if (!adapter.balanceOf) {
      skipped.push({ network, addressIn, why: 'the adapter reads no balances' });
      continue;
    }
    for (const ticker of tickersOf(network, filter)) {
      let amount: bigint | null;
      try {
        amount = await adapter.balanceOf(addressIn, ticker, seenUpTo);
      } catch (e) {
        if (e instanceof InvalidRequestError) continue; // a token without a configured contract or mint
        throw e;
      }
      if (amount === null) {
        skipped.push({ network, addressIn, ticker, why: 'a transaction touched it after the block the watcher has read; run again shortly' });
        continue;
      }
      if (amount === 0n) continue;
      balances.push({
        network, ticker, addressIn, derivationIndex: address.derivationIndex.toString(), addressOut: address.addressOut, amount: amount.toString(), why: whyOf(ticker, own),
      });
    }
  }
  return { balances, skipped, totals: totalsOf(balances) };
}

export function totalsOf(balances: Array<{ ticker: string; amount: string }>): SweepListing['totals'] {
  const totals = new Map<string, { amount: bigint; addresses: number }>();
  for (const b of balances) {
    const t = totals.get(b.ticker) ?? { amount: 0n, addresses: 0 };
    totals.set(b.ticker, { amount: t.amount + BigInt(b.amount), addresses: t.addresses + 1 });
  }
  return [...totals].map(([ticker, t]) => ({ ticker, amount: t.amount.toString(), addresses: t.addresses }));
}

