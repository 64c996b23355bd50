import { numeric } from 'drizzle-orm/pg-core';

/**
 * Amounts are integers of base units (satoshi, wei, lamport, token units) in NUMERIC(78,0):
 * 78 digits hold any uint256. drizzle hands them over as strings; src/domain/money.ts turns
 * them into bigint.
 */
export const baseUnits = (name: string) => numeric(name, { precision: 78, scale: 0 });
