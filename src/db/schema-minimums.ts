import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { baseUnits } from './columns';

// The processing minimums' tables (src/db/schema.ts re-exports them).

/**
 * The current processing minimum per asset (SPEC 2.1, 2.2, 8), written by the `minimum-refresh` Temporal
 * schedule (activities/minimums.ts) and by the operator's pin. `value_base` is the last computed figure (kept when a refresh fails, so info can still
 * state it); `unavailable_reason` is set while the latest refresh could not compute one.
 */
export const assetMinimums = pgTable('asset_minimums', {
  ticker: text('ticker').primaryKey(),
  valueBase: baseUnits('value_base'),
  computedAt: timestamp('computed_at', { withTimezone: true }),
  unavailableReason: text('unavailable_reason'),
  attemptedAt: timestamp('attempted_at', { withTimezone: true }),
  pinnedBase: baseUnits('pinned_base'),
  pinnedAt: timestamp('pinned_at', { withTimezone: true }),
});

/**
 * Minimums a customer may still have read: a stated figure (pin, else computed) that a higher one replaced
 * stays honoured for one refresh interval (`honoured_until`), so a deposit of what the catalog showed a moment
 * before is not refused because a refresh raised it meanwhile (src/domain/minimum.ts depositMinimum). Rows
 * past their time are deleted by the next write.
 */
export const supersededMinimums = pgTable(
  'superseded_minimums',
  {
    ticker: text('ticker').notNull(),
    valueBase: baseUnits('value_base').notNull(),
    honouredUntil: timestamp('honoured_until', { withTimezone: true }).notNull(),
  },
  (t) => [index('superseded_minimums_ticker_until_idx').on(t.ticker, t.honouredUntil)],
);
