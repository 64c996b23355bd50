import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  bigserial,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { baseUnits } from './columns';

// The address tables (public material, the Solana pool, addresses derived ahead): ./schema-addresses.ts.
export * from './schema-addresses';
// The processing minimums (the current figure per asset, the replaced ones still honoured): ./schema-minimums.ts.
export * from './schema-minimums';

/** Operator state per asset. The static facts (decimals, contract, network) live in src/domain/assets.ts. */
export const assets = pgTable('assets', {
  ticker: text('ticker').primaryKey(),
  enabled: boolean('enabled').notNull().default(true),
  feePercent: text('fee_percent'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** One immutable payment configuration per callback URL (the callback URL is its identity). */
export const paymentConfigs = pgTable(
  'payment_configs',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    callbackUrl: text('callback_url').notNull(),
    /**
     * Where the callbacks go and what they sign (callbackWireKey, src/callbacks/transport.ts): one
     * configuration per key, so no alias of a callback URL has a payout of its own (DESIGN 15). Never null:
     * the unique index would not see a null one.
     */
    callbackKey: text('callback_key').notNull(),
    /** callbackHost(callback_url) (src/domain/callback-host.ts), written with the row: what the fee tier's volume counts by. */
    callbackHost: text('callback_host').notNull(),
    ticker: text('ticker').notNull(),
    family: text('family').notNull(),
    addressIn: text('address_in').notNull(),
    addressOut: text('address_out').notNull(),
    derivationIndex: bigint('derivation_index', { mode: 'bigint' }).notNull(),
    notifyPending: boolean('notify_pending').notNull(),
    notifyConfirmations: integer('notify_confirmations').notNull(),
    post: smallint('post').notNull(),
    json: smallint('json').notNull(),
    convert: smallint('convert').notNull(),
    priority: text('priority').notNull(),
    minimumTransactionBase: baseUnits('minimum_transaction_base'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('payment_configs_callback_url_uq').on(t.callbackUrl),
    uniqueIndex('payment_configs_callback_key_uq').on(t.callbackKey),
    // Watchers match a block's candidate recipients with one query on this index.
    index('payment_configs_family_address_in_idx').on(t.family, t.addressIn),
    // Watchers keep the watched addresses in memory and read only the rows created since (src/detection/watched-addresses.ts).
    index('payment_configs_family_created_at_idx').on(t.family, t.createdAt),
    // A forward's fee tier sums the callback host's recent payments: its configurations by this index.
    index('payment_configs_callback_host_idx').on(t.callbackHost),
  ],
);

/** One row per observed deposit: an independent payment with its own UUID. */
export const payments = pgTable(
  'payments',
  {
    uuid: uuid('uuid').primaryKey().default(sql`gen_random_uuid()`),
    configId: uuid('config_id')
      .notNull()
      .references(() => paymentConfigs.id),
    ticker: text('ticker').notNull(),
    network: text('network').notNull(),
    /** deposit:{network}:{txid}:{vout or log index} — also the Temporal workflow ID. */
    depositKey: text('deposit_key').notNull(),
    txidIn: text('txid_in'),
    vout: integer('vout'),
    blockNumber: bigint('block_number', { mode: 'bigint' }),
    blockHash: text('block_hash'),
    /**
     * The height at which the watcher's reading says the deposit reaches its required confirmations
     * (dueHeight in src/domain/finality.ts): the watcher signals the workflows whose due height its
     * newest block passed, with one indexed range query per batch, whatever the number of deposits waiting.
     */
    dueHeight: bigint('due_height', { mode: 'bigint' }),
    valueBase: baseUnits('value_base').notNull(),
    forwardedBase: baseUnits('forwarded_base').notNull().default('0'),
    feeBase: baseUnits('fee_base').notNull().default('0'),
    feePercent: text('fee_percent').notNull().default('0.00'),
    price: text('price'),
    confirmations: integer('confirmations').notNull().default(0),
    result: text('result').notNull(),
    reason: text('reason'),
    txidOut: text('txid_out'),
    /** Signed forward transaction, stored before broadcast so a retry re-sends the same bytes. */
    forwardRaw: text('forward_raw'),
    /**
     * Until when the forward activity that broadcast it watches the chain for its inclusion itself (set
     * with the stored bytes, database clock): the watcher sends no `forward` hint before then, so that the
     * hint cannot arrive while that activity's workflow task is finishing (src/detection/push.ts).
     */
    forwardWatchUntil: timestamp('forward_watch_until', { withTimezone: true }),
    /** The immutable confirmed callback snapshot (payload fields), written once. */
    snapshot: jsonb('snapshot'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUpdate: timestamp('last_update', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('payments_deposit_key_uq').on(t.depositKey),
    index('payments_config_ticker_idx').on(t.configId, t.ticker),
    // One txid_out belongs to one payment (DESIGN 4): a colliding forward is an error, never a second booking.
    uniqueIndex('payments_txid_out_uq').on(t.txidOut),
    index('payments_due_idx').on(t.network, t.dueHeight).where(sql`${t.result} = 'pending'`),
    // The fee tier's first, partial hour of its 30 days is summed from the payments themselves (host_volume_hours).
    index('payments_created_at_idx').on(t.createdAt),
  ],
);

/**
 * A callback host's forwarded volume per hour: the sum of value_base × price of its payments forwarded
 * (sent or done, with a plain decimal price) whose created_at falls in that hour (UTC), per ticker. A
 * trigger on payments keeps it (drizzle/0000_init.sql), whatever statement changes a payment,
 * and drops a host's hours older than 31 days when it opens a new one. A forward's fee tier reads the host's
 * last 30 days from here (at most 720 hours per ticker) instead of summing every payment of the host.
 */
export const hostVolumeHours = pgTable(
  'host_volume_hours',
  {
    host: text('host').notNull(),
    hour: timestamp('hour', { withTimezone: true }).notNull(),
    ticker: text('ticker').notNull(),
    valueTimesPrice: numeric('value_times_price').notNull(),
    /**
     * The share's stripe: 0-7, the writing session's backend pid modulo 8, so that one host's forwards,
     * stored by different sessions at once, do not queue on one row; -1 for a host's earlier hours folded
     * into one row per hour and ticker (drizzle/0000_init.sql).
     */
    stripe: smallint('stripe').notNull().default(-1),
  },
  (t) => [primaryKey({ columns: [t.host, t.hour, t.ticker, t.stripe] })],
);

/**
 * Every forward transaction the gateway ever signed, kept after a plan is discarded: a txid belongs to
 * one payment for good, an account chain's nonces are reserved here (the next forward from a source never
 * reuses the nonce of a stored, unconfirmed one), and a discarded plan's rival is looked up here.
 */
export const forwardTxs = pgTable(
  'forward_txs',
  {
    txid: text('txid').primaryKey(),
    paymentUuid: uuid('payment_uuid')
      .notNull()
      .references(() => payments.uuid),
    network: text('network').notNull(),
    /** The address the forward spends from (address_in). */
    source: text('source').notNull(),
    /** EVM account nonce; null on chains without one. */
    nonce: bigint('nonce', { mode: 'bigint' }),
    /** Set when the chain proved these bytes can never land and the plan was replaced. */
    discardedAt: timestamp('discarded_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('forward_txs_source_idx').on(t.network, t.source, t.nonce),
    // Two live plans can never hold one nonce of one source, even if a lock was lost (a database restart
    // ends the lock's session while its holder still runs): the second store fails and prepares again.
    uniqueIndex('forward_txs_live_nonce_uq')
      .on(t.network, t.source, t.nonce)
      .where(sql`${t.discardedAt} IS NULL AND ${t.nonce} IS NOT NULL`),
  ],
);

/** Every callback delivery attempt, as sent and as answered (SPEC 2.5). */
export const deliveryAttempts = pgTable(
  'delivery_attempts',
  {
    id: bigserial('id', { mode: 'bigint' }).primaryKey(),
    paymentUuid: uuid('payment_uuid')
      .notNull()
      .references(() => payments.uuid),
    stage: text('stage').notNull(),
    attempt: integer('attempt').notNull(),
    requestUrl: text('request_url').notNull(),
    responseBody: text('response_body'),
    responseStatus: integer('response_status'),
    error: text('error'),
    nextTry: timestamp('next_try', { withTimezone: true }),
    pending: smallint('pending').notNull(),
    confirmed: smallint('confirmed').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('delivery_attempts_payment_stage_attempt_uq').on(t.paymentUuid, t.stage, t.attempt),
  ],
);

// The next HD derivation index of each address family is a sequence, derivation_index_<family>
// (drizzle/0000_init.sql; src/db/queries/derivation.ts).

/** Durable scan position of each network's watcher. */
export const chainCursors = pgTable('chain_cursors', {
  network: text('network').primaryKey(),
  height: bigint('height', { mode: 'bigint' }).notNull(),
  blockHash: text('block_hash'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The assets a configuration takes deposits of: the one it was created for, plus every other asset of
 * the same address family it was reused for (SPEC 4.6 rule 1 returns the same configuration and
 * address_in, so deposits of that asset must be processed too). Other assets sent to the address are not
 * the merchant's orders (e.g. the gas tank's own top-ups) and are not watched.
 */
export const configTickers = pgTable(
  'config_tickers',
  {
    configId: uuid('config_id')
      .notNull()
      .references(() => paymentConfigs.id),
    ticker: text('ticker').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('config_tickers_config_ticker_uq').on(t.configId, t.ticker)],
);

/**
 * The operator's sweeps (`npm run admin -- sweep --execute`): what is left at a deposit address of an account
 * chain (commissions, failed and below-minimum deposits, other assets) moved to the treasury or to the
 * configuration's address_out. Like a forward (DESIGN 4), a sweep is signed once and stored here before it is
 * broadcast; a later run re-sends the stored bytes. At most one open sweep per source and asset: the partial
 * unique index refuses a second signature while one is open. `nonce` (EVM) reserves the source's nonce for
 * forwards too (src/db/queries/forwards.ts nonceFloor).
 */
export const sweeps = pgTable(
  'sweeps',
  {
    txid: text('txid').primaryKey(),
    network: text('network').notNull(),
    ticker: text('ticker').notNull(),
    /** The deposit address swept (payment_configs.address_in). */
    source: text('source').notNull(),
    destination: text('destination').notNull(),
    /** What reaches the destination, base units of the ticker. */
    amount: baseUnits('amount').notNull(),
    /** The network fee withheld from a native sweep (its maximum on EVM), base units of the native coin. */
    fee: baseUnits('fee').notNull(),
    /** The signed plan (ForwardPlan JSON): the bytes a later run re-sends. */
    plan: text('plan').notNull(),
    nonce: bigint('nonce', { mode: 'bigint' }),
    /** open (signed, maybe sent) → confirmed | failed (reverted on chain) | dropped (the chain proved it can never land). */
    status: text('status').notNull(),
    reason: text('reason'),
    /** Block height of a `replaceable` reading: a later reading at a higher one drops the sweep (DESIGN 4's evidence rule). */
    replaceableAt: bigint('replaceable_at', { mode: 'bigint' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('sweeps_open_uq').on(t.network, t.source, t.ticker).where(sql`${t.status} = 'open'`),
    index('sweeps_source_idx').on(t.network, t.source, t.nonce),
  ],
);
