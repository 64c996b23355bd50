// `npm run admin -- sweep`: argument parsing and the printout; the sweep runs as a `sweep` workflow on the worker.
import type { Client } from '@temporalio/client';
import { ASSETS, NETWORKS, findAsset } from '../src/domain/assets';
import { formatUnits } from '../src/domain/money';
import type { SweepReport, SweepSelection } from '../src/sweep/execute';
import type { SweepFilter, SweepListing } from '../src/sweep/list';
import type { SweepInput } from '../workflows/sweep';

export const SWEEP_USAGE =
  'usage: npm run admin -- sweep [--network <n>] [--ticker <t>[,<t>]] [--address <a>[,<a>]] [--json]\n' +
  '       npm run admin -- sweep --execute --to treasury|address_out (--ticker ... | --address ... | --all) [--network <n>] [--json]';

const ACCOUNT_FAMILIES = new Set(['evm', 'sol']);

/** The sweep a command line asks for, checked before anything is sent; a string is the reason it is refused. */
export function parseSweep(args: string[]): { input: SweepInput; json: boolean } | string {
  const filter: SweepFilter = {};
  let execute = false;
  let all = false;
  let json = false;
  let to: string | undefined;
  const list = (v: string) => v.split(',').map((x) => x.trim()).filter((x) => x.length > 0);
  for (let i = 0; i < args.length; i++) {
    const flag = args[i];
    const value = () => {
      const v = args[++i];
      if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value`);
      return v;
    };
    try {
      if (flag === '--execute') execute = true;
      else if (flag === '--all') all = true;
      else if (flag === '--json') json = true;
      else if (flag === '--to') to = value();
      else if (flag === '--network') filter.network = value();
      else if (flag === '--ticker') filter.tickers = [...(filter.tickers ?? []), ...list(value()).map((t) => t.toLowerCase())];
      else if (flag === '--address') filter.addresses = [...(filter.addresses ?? []), ...list(value())];
      else return SWEEP_USAGE;
    } catch (e) {
      return `${(e as Error).message}\n${SWEEP_USAGE}`;
    }
  }
  if (filter.network !== undefined && !ACCOUNT_FAMILIES.has(NETWORKS[filter.network]?.family ?? '')) {
    return `not an account-chain network: ${filter.network.slice(0, 64)} (sweep serves ${Object.values(NETWORKS).filter((n) => ACCOUNT_FAMILIES.has(n.family)).map((n) => n.id).join(', ')})`;
  }
  for (const t of filter.tickers ?? []) {
    const a = findAsset(t);
    if (!a) return `unknown ticker: ${t.slice(0, 64)}`;
    if (!ACCOUNT_FAMILIES.has(NETWORKS[a.network].family)) return `${t}: UTXO deposits leave nothing at address_in; nothing to sweep`;
  }
  if (!execute) {
    if (to !== undefined || all) return `--to and --all go with --execute\n${SWEEP_USAGE}`;
    return { input: { execute: false, filter }, json };
  }
  if (to !== 'treasury' && to !== 'address_out') return `--execute needs --to treasury or --to address_out\n${SWEEP_USAGE}`;
  if (!all && !filter.tickers && !filter.addresses) return `--execute needs a selection: --ticker, --address, or --all\n${SWEEP_USAGE}`;
  const selection: SweepSelection = { ...filter, to };
  return { input: { execute: true, selection }, json };
}

const coins = (ticker: string, base: string) => `${formatUnits(BigInt(base), ASSETS[ticker].decimals)} ${ticker}`;
const nativeCoins = (ticker: string, base: string) => coins(NETWORKS[ASSETS[ticker].network].nativeTicker, base);

/** The dry run's printout: one line per balance, totals per asset, then what was left out and why. */
export function printListing(l: SweepListing, out: (line: string) => void): void {
  if (l.balances.length === 0) out('nothing to sweep');
  for (const b of l.balances) out(`${b.network}  ${b.ticker}  ${b.addressIn}  ${coins(b.ticker, b.amount)}  (${b.why.join(', ')})`);
  for (const t of l.totals) out(`total ${coins(t.ticker, t.amount)} at ${t.addresses} address${t.addresses === 1 ? '' : 'es'}`);
  for (const s of l.skipped) out(`skipped ${s.network} ${s.addressIn}${s.ticker ? ` ${s.ticker}` : ''}: ${s.why}`);
}

export function printReport(r: SweepReport, out: (line: string) => void): void {
  if (r.moves.length === 0) out('nothing swept');
  for (const m of r.moves) {
    const note = m.note ? `; ${m.note}` : '';
    out(`${m.status} ${m.network} ${coins(m.ticker, m.amount)} from ${m.addressIn} to ${m.destination}: txid ${m.txid}, fee at most ${nativeCoins(m.ticker, m.fee)}${m.signedNow ? '' : ' (stored by an earlier run)'}${note}`);
  }
  for (const s of r.skipped) out(`skipped ${s.network} ${s.addressIn}${s.ticker ? ` ${s.ticker}` : ''}: ${s.why}`);
}

/** Runs the sweep workflow on the worker and prints its result; exit code 1 when a sweep failed on chain. */
export async function runSweep(client: Client, parsed: { input: SweepInput; json: boolean }, taskQueue: string, out: (line: string) => void): Promise<number> {
  const result = await client.workflow.execute('sweep', {
    taskQueue,
    workflowId: `sweep:${parsed.input.execute ? 'execute' : 'list'}:${Date.now()}`,
    args: [parsed.input],
    workflowExecutionTimeout: '15 minutes',
  });
  if (parsed.json) {
    out(JSON.stringify(result, null, 2));
  } else if (parsed.input.execute) {
    printReport(result as SweepReport, out);
  } else {
    printListing(result as SweepListing, out);
  }
  return parsed.input.execute && (result as SweepReport).moves.some((m) => m.status === 'failed') ? 1 : 0;
}
