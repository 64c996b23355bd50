import { sql } from 'drizzle-orm';
import { bigint, index, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

// The tables of deposit addresses and the public material they come from (src/db/schema.ts re-exports them).

/**
 * Public material the worker publishes for the API, which holds no secret (DESIGN 9): the account xpubs
 * (`xpubs`, JSON) and the callback signer's public key (`callback-public-key`, PEM), each with its time.
 */
export const publicMaterial = pgTable('public_material', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Pre-derived deposit addresses of networks without public derivation (Solana): the worker adds them,
 * at indexes taken from the family's sequence; a create takes one atomically inside its transaction.
 */
export const addressPool = pgTable(
  'address_pool',
  {
    network: text('network').notNull(),
    derivationIndex: bigint('derivation_index', { mode: 'bigint' }).notNull(),
    address: text('address').notNull(),
    takenAt: timestamp('taken_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('address_pool_network_index_uq').on(t.network, t.derivationIndex),
    index('address_pool_free_idx').on(t.network, t.derivationIndex).where(sql`${t.takenAt} IS NULL`),
  ],
);

/**
 * Deposit addresses derived from a published xpub ahead of need, by the API itself (public material only):
 * a create takes the address of the index it takes from the family's sequence, in the same statement.
 * `source` names the network, chain mode and xpub the addresses come from, so a different seed or mode never
 * reads them.
 */
export const derivedAddresses = pgTable(
  'derived_addresses',
  {
    source: text('source').notNull(),
    derivationIndex: bigint('derivation_index', { mode: 'bigint' }).notNull(),
    address: text('address').notNull(),
  },
  (t) => [primaryKey({ columns: [t.source, t.derivationIndex] })],
);
