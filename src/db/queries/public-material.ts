import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { addressPool, publicMaterial } from '../schema';
import { takeIndexes } from './derivation';

export const XPUBS_KEY = 'xpubs';
export const CALLBACK_PUBLIC_KEY = 'callback-public-key';

/** Writes one piece of public material (worker side); a value unchanged keeps its time. */
export async function publish(db: Db, key: string, value: string): Promise<void> {
  await db
    .insert(publicMaterial)
    .values({ key, value })
    .onConflictDoUpdate({ target: publicMaterial.key, set: { value, updatedAt: sql`now()` }, setWhere: sql`${publicMaterial.value} <> ${value}` });
}

export async function readPublished(db: Db, key: string): Promise<string | undefined> {
  const [row] = await db.select({ value: publicMaterial.value }).from(publicMaterial).where(eq(publicMaterial.key, key));
  return row?.value;
}

/** Free pool addresses of a network. */
export async function poolFree(db: Db, network: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(addressPool).where(and(eq(addressPool.network, network), isNull(addressPool.takenAt)));
  return Number(row?.n ?? 0);
}

/**
 * Adds `n` addresses to a network's pool: n indexes taken from the family's sequence (so a pool index is
 * never also handed out to another address), each derived by `derive` in runs between which the event loop
 * serves the worker's other work, then stored at once. A
 * failure leaves the indexes taken unused, which nothing else is ever given.
 */
export async function addToPool(db: Db, network: string, family: string, n: number, derive: (index: bigint) => string): Promise<void> {
  if (n <= 0) return;
  const indexes = await takeIndexes(db, family, n);
  const rows: Array<{ network: string; derivationIndex: bigint; address: string }> = [];
  for (let k = 0; k < indexes.length; k += DERIVE_RUN) {
    if (k > 0) await yieldToOthers();
    for (const derivationIndex of indexes.slice(k, k + DERIVE_RUN)) rows.push({ network, derivationIndex, address: derive(derivationIndex) });
  }
  await db.insert(addressPool).values(rows);
}

/** Pool addresses derived between two turns of the event loop. */
const DERIVE_RUN = 64;

/**
 * Raised when a network's pool is dry: a metric counts it and the create waits for the refill. (A create
 * takes the lowest free pool address inside its own statement: src/db/queries/create-config.ts.)
 */
export class AddressPoolEmptyError extends Error {
  constructor(readonly network: string) {
    super(`no pre-derived ${network} deposit address is free; the worker refills the pool`);
    this.name = 'AddressPoolEmptyError';
  }
}
