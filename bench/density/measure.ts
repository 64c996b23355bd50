// What bench/mainnet-density.ts measures with: timings of this process, the fit of a cost per block and per
// transaction, the line at mainnet's block size, 1,000 watched addresses, and the watcher's catch-up.
import { sql } from 'drizzle-orm';
import { callbackValues } from '../../test/helpers/callback-columns';
import type { EvmAdapter } from '../../src/chains/evm/adapter';
import type { SolAdapter } from '../../src/chains/sol/adapter';
import type { UtxoAdapter } from '../../src/chains/utxo/adapter';
import type { Database } from '../../src/db/client';
import { readCursor, scanOnce, writeCursor } from '../../src/detection/watcher';

export const MAINNET = {
  solana: { txs: 3000, intervalMs: 400 },
  ethereum: { txs: 200, intervalMs: 12_000 },
  bitcoin: { txs: 3000, intervalMs: 600_000 },
  litecoin: { txs: 3000, intervalMs: 150_000 },
  bitcoincash: { txs: 3000, intervalMs: 600_000 },
};
export const WATCHED = 1_000;

export interface Timing {
  cpuMs: number;
  wallMs: number;
}
export async function timed<T>(fn: () => Promise<T>): Promise<Timing & { value: T }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const c = process.cpuUsage(c0);
  return { value, cpuMs: (c.user + c.system) / 1000, wallMs: performance.now() - t0 };
}
/** Least squares y = a + b·x: the per-block part (a) and the per-transaction part (b) of a cost. */
export function fit(xs: number[], ys: number[]): { a: number; b: number } {
  const n = xs.length;
  const mx = xs.reduce((s, x) => s + x, 0) / n;
  const my = ys.reduce((s, y) => s + y, 0) / n;
  const sxx = xs.reduce((s, x) => s + (x - mx) ** 2, 0);
  const b = sxx > 0 ? xs.reduce((s, x, i) => s + (x - mx) * (ys[i] - my), 0) / sxx : my / mx;
  return { a: my - b * mx, b };
}
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
export const f = (x: number, d = 1) => x.toFixed(d);
export const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');

/** A cost of a + b per transaction, at the network's mainnet block size, as the share of its interval. */
export function mainnetLine(network: keyof typeof MAINNET, label: string, cpu: { a: number; b: number }, wall: { a: number; b: number }): void {
  const m = MAINNET[network];
  const c = cpu.a + cpu.b * m.txs;
  const share = c / m.intervalMs;
  console.log(
    `  ${label}: at mainnet size (${m.txs} tx) ${f(c)} ms CPU, ${f(wall.a + wall.b * m.txs)} ms wall per block = ${f(100 * share)} % of a core at one block per ${m.intervalMs} ms (target ≤ 20 %: ${verdict(share <= 0.2)})`,
  );
}

export async function watchRandom(db: Database['db'], family: string, ticker: string, address: () => string): Promise<void> {
  const rows = Array.from({ length: WATCHED }, (_, i) => ({ a: address(), i }));
  const values = rows.map(({ a, i }) => sql`(${callbackValues(`https://shop.example/${family}/${i}`)}, ${ticker}, ${family}, ${a}, ${a}, ${i}, false, 1, 0, 0, 0, 'default')`);
  await db.execute(sql`INSERT INTO payment_configs (callback_url, callback_key, callback_host, ticker, family, address_in, address_out, derivation_index, notify_pending, notify_confirmations, post, json, convert, priority) VALUES ${sql.join(values, sql`, `)}`);
}

export async function catchUp(network: string, adapter: SolAdapter | EvmAdapter | UtxoAdapter, db: Database['db'], from: { height: bigint; hash: string | null }, to: bigint, maxBlocks: number) {
  await writeCursor(db, network, from);
  return timed(async () => {
    let passes = 0;
    while ((await readCursor(db, network))!.height < to && passes++ < 10_000) await scanOnce(adapter, db, network, { maxBlocks });
    return passes;
  });
}
