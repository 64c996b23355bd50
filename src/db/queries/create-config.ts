import { sql, type SQL } from 'drizzle-orm';
import { callbackWireKey } from '../../callbacks/transport';
import { callbackHost } from '../../domain/callback-host';
import type { Db } from '../client';
import { $, preparedStatement, rowsOf } from '../prepared';
import type { NewPaymentConfig } from './configs';
import { nextIndexSql } from './derivation';
import { AddressPoolEmptyError } from './public-material';

/**
 * SPEC 4.6 create in one round trip: one statement reads the callback's existing configuration and whether
 * address_out is one of our deposit addresses, and only for a new callback with a payout address of its
 * own takes the family's next index (its sequence: src/db/queries/derivation.ts) and that index's address,
 * and inserts the configuration and its ticker. (createLookup, the read alone, serves requests with other
 * errors to report.) As one statement it is one transaction, and nothing in it waits on another create:
 * the sequence holds no lock, and a pool address is taken SKIP LOCKED. A failure (the callback created
 * meanwhile, no address stored for the index) rolls everything back but the sequence step: that index is
 * skipped, never handed out again.
 */

/** Where a new configuration's address_in comes from. */
export type AddressSource =
  /** derived_addresses rows of an xpub (src/addresses/derived-addresses.ts), at the counter's index. */
  | { kind: 'derived'; source: string }
  /** The pre-derived pool of a network without public derivation (Solana), the lowest free address. */
  | { kind: 'pool'; network: string };

/** The fields of a configuration that create answers with. */
export interface CreatedConfig {
  id: string;
  callbackUrl: string;
  ticker: string;
  family: string;
  addressIn: string;
  addressOut: string;
  derivationIndex: bigint;
  priority: string;
  minimumTransactionBase: string | null;
}

/** The derived address of the counter's index was not stored yet: store more, then try again. */
export class DerivedAddressMissingError extends Error {
  constructor(readonly source: string) {
    super(`no derived address stored for the next index of ${source}`);
    this.name = 'DerivedAddressMissingError';
  }
}

interface ConfigRow {
  id: string;
  callback_url: string;
  ticker: string;
  family: string;
  address_in: string;
  address_out: string;
  derivation_index: string | bigint;
  priority: string;
  minimum_transaction_base: string | null;
}

/** The columns a create inserts, in the order both create statements give their values. */
const INSERTED = sql.raw(
  'callback_url, callback_key, callback_host, ticker, family, address_in, address_out, derivation_index, notify_pending, notify_confirmations, post, json, convert, priority, minimum_transaction_base',
);

const RETURNED = sql.raw('id, callback_url, ticker, family, address_in, address_out, derivation_index, priority, minimum_transaction_base::text AS minimum_transaction_base');

const toConfig = (r: ConfigRow): CreatedConfig => ({
  id: r.id,
  callbackUrl: r.callback_url,
  ticker: r.ticker,
  family: r.family,
  addressIn: r.address_in,
  addressOut: r.address_out,
  derivationIndex: BigInt(String(r.derivation_index)),
  priority: r.priority,
  minimumTransactionBase: r.minimum_transaction_base,
});

/**
 * The id of the callback's configuration: the one of its wire key (callbackWireKey: an alias finds the
 * configuration it would share callbacks with). Every row has its key, so the row of the exact URL is this one.
 */
const callbackConfigId = (key: SQL) => sql`(SELECT id FROM payment_configs WHERE callback_key = ${key})`;

const lookupStatement = preparedStatement(
  'gateway_create_lookup',
  sql`
    SELECT EXISTS (SELECT 1 FROM payment_configs WHERE family = ${$('family')}::text AND address_in = ${$('addressOut')}::text) AS out_is_deposit, c.*
    FROM (SELECT 1) AS one
    LEFT JOIN (SELECT ${RETURNED} FROM payment_configs
               WHERE id = ${callbackConfigId(sql`${$('callbackKey')}::text`)}) AS c ON true`,
);

/**
 * The configuration of `callbackUrl` (or of an alias of it) if one exists, and whether `addressOut`
 * (canonical; undefined skips the check) is the address_in of a configuration of `family`: one read.
 */
export async function createLookup(
  db: Db,
  callbackUrl: string | undefined,
  family: string,
  addressOut: string | undefined,
): Promise<{ existing: CreatedConfig | undefined; outIsDeposit: boolean }> {
  const callbackKey = callbackUrl === undefined ? null : callbackWireKey(callbackUrl);
  const result = await lookupStatement(db, { family, addressOut: addressOut ?? null, callbackKey });
  const [row] = rowsOf<ConfigRow & { out_is_deposit: boolean }>(result);
  return { existing: row.id ? toConfig(row) : undefined, outIsDeposit: row.out_is_deposit === true };
}

/** Whether the statement may take an address and insert: address_out is no deposit address and the callback is new. */
const FREE_TO_INSERT = sql.raw('(SELECT NOT out_is_deposit AND existing_id IS NULL FROM look)');

/** The (derivation_index, address) row the new configuration takes; no row, or no address, when it may not insert. */
function addressRow(kind: AddressSource['kind']): SQL {
  if (kind === 'derived') {
    return sql`
      idx AS (SELECT ${nextIndexSql($('family'))} AS i WHERE ${FREE_TO_INSERT}),
      addr AS (
        SELECT idx.i AS derivation_index,
               (SELECT d.address FROM derived_addresses d WHERE d.source = ${$('source')}::text AND d.derivation_index = idx.i) AS address
        FROM idx)`;
  }
  // SKIP LOCKED: concurrent creates never wait on each other; a rollback gives the address back.
  return sql`
    free AS (
      SELECT derivation_index FROM address_pool WHERE network = ${$('source')}::text AND taken_at IS NULL AND ${FREE_TO_INSERT}
      ORDER BY derivation_index LIMIT 1 FOR UPDATE SKIP LOCKED),
    taken AS (
      UPDATE address_pool p SET taken_at = now() FROM free
      WHERE p.network = ${$('source')}::text AND p.derivation_index = free.derivation_index
      RETURNING p.derivation_index, p.address),
    addr AS (SELECT (SELECT derivation_index FROM taken) AS derivation_index, (SELECT address FROM taken) AS address WHERE ${FREE_TO_INSERT})`;
}

/** The create statement of one address source kind, its values as placeholders (prepared once per connection). */
function createStatement(kind: AddressSource['kind']) {
  return preparedStatement(
    `gateway_create_${kind}`,
    sql`
      WITH look AS (
        SELECT EXISTS (SELECT 1 FROM payment_configs WHERE family = ${$('family')}::text AND address_in = ${$('outCanonical')}::text) AS out_is_deposit,
               ${callbackConfigId(sql`${$('callbackKey')}::text`)} AS existing_id),
      ${addressRow(kind)},
      cfg AS (
        INSERT INTO payment_configs (${INSERTED})
        SELECT ${$('callbackUrl')}::text, ${$('callbackKey')}::text, ${$('callbackHost')}::text, ${$('ticker')}::text, ${$('family')}::text, addr.address, ${$('addressOut')}::text,
          addr.derivation_index, ${$('notifyPending')}::boolean, ${$('notifyConfirmations')}::integer, ${$('post')}::smallint,
          ${$('json')}::smallint, ${$('convert')}::smallint, ${$('priority')}::text, ${$('minimum')}::numeric
        FROM addr
        RETURNING ${RETURNED}),
      ticker AS (INSERT INTO config_tickers (config_id, ticker) SELECT id, ticker FROM cfg)
      SELECT look.out_is_deposit, true AS made, cfg.* FROM look, cfg
      UNION ALL
      SELECT look.out_is_deposit, false AS made, e.* FROM look
        LEFT JOIN LATERAL (SELECT ${RETURNED} FROM payment_configs WHERE id = look.existing_id) AS e ON true
        WHERE NOT EXISTS (SELECT 1 FROM cfg)`,
  );
}
const createStatements = { derived: createStatement('derived'), pool: createStatement('pool') };

const codeOf = (e: unknown): { code?: string; constraint?: string; column?: string } => {
  const err = e as { code?: string; cause?: unknown };
  return typeof err?.code === 'string' ? (err as object) : err?.cause ? codeOf(err.cause) : {};
};

/** Another create stored the callback, or an alias of it, meanwhile. */
const CALLBACK_UNIQUE = new Set(['payment_configs_callback_url_uq', 'payment_configs_callback_key_uq']);

/** What one create statement found or made. */
export interface CreateOutcome {
  /** address_out is the address_in of a configuration of the family: nothing was inserted. */
  outIsDeposit: boolean;
  /** The callback's stored configuration (nothing was inserted), */
  existing?: CreatedConfig;
  /** or the one this statement inserted. Neither: another create stored the callback meanwhile (read it). */
  made?: CreatedConfig;
}

/** A create statement's row: what it found or made, and whether address_out is a deposit address. */
type OutcomeRow = ConfigRow & { out_is_deposit: boolean; made: boolean };

const outcomeOf = (row: OutcomeRow): CreateOutcome => {
  const config = row.id ? toConfig(row) : undefined;
  return { outIsDeposit: row.out_is_deposit === true, ...(row.made ? { made: config } : { existing: config }) };
};

/**
 * A create in one statement: the look-up of createLookup, and only when address_out (canonical) is no
 * deposit address of the family and the callback URL is new, the next address of `from` with the new
 * configuration and its ticker. Neither existing nor made when another create stored the same callback
 * URL between this statement's snapshot and its insert.
 */
export async function createConfig(db: Db, input: NewPaymentConfig, from: AddressSource, addressOutCanonical: string): Promise<CreateOutcome> {
  try {
    // The placeholders are the input's field names, and these.
    const result = await createStatements[from.kind](db, {
      ...input,
      callbackKey: callbackWireKey(input.callbackUrl),
      callbackHost: callbackHost(input.callbackUrl),
      outCanonical: addressOutCanonical,
      source: from.kind === 'derived' ? from.source : from.network,
      minimum: input.minimumTransactionBase.toString(),
    });
    return outcomeOf(rowsOf<OutcomeRow>(result)[0]);
  } catch (e) {
    const { code, constraint, column } = codeOf(e);
    if (code === '23505' && CALLBACK_UNIQUE.has(constraint ?? '')) return { outIsDeposit: false };
    // NOT NULL of address_in: the index had no stored address, or the pool had none free.
    if (code === '23502' && column === 'address_in') throw from.kind === 'derived' ? new DerivedAddressMissingError(from.source) : new AddressPoolEmptyError(from.network);
    throw e;
  }
}

/** One create of a batch: what createConfig takes. */
export interface BatchedCreate {
  input: NewPaymentConfig;
  outCanonical: string;
}

/**
 * createConfig's statement for many creates of one derived source and family at once (api/create-batch.ts):
 * the requests as one JSON value, each looked up, and each free one given the next index with its address,
 * inserted with its ticker. A callback URL stored meanwhile by another transaction is skipped (ON CONFLICT
 * DO NOTHING: neither made nor found, as createConfig's unique violation), its index never handed out. Any
 * other failure (an index with no stored address) fails the whole statement: the caller runs each create
 * alone. The callback wire keys of one batch are distinct.
 */
const batchStatement = preparedStatement(
  'gateway_create_derived_batch',
  sql`
    WITH input AS (
      SELECT * FROM json_to_recordset(${$('items')}::json) AS i(
        n integer, callback_url text, callback_key text, callback_host text, ticker text, address_out text, out_canonical text, notify_pending boolean,
        notify_confirmations integer, post smallint, json smallint, convert smallint, priority text, minimum numeric)),
    look AS (
      -- Scalar subqueries, an index probe per request: the planner takes json_to_recordset for 100 rows, and
      -- would answer an EXISTS here by hashing every address_in of the family once per statement.
      SELECT i.*,
             coalesce((SELECT true FROM payment_configs WHERE family = ${$('family')}::text AND address_in = i.out_canonical LIMIT 1), false) AS out_is_deposit,
             ${callbackConfigId(sql`i.callback_key`)} AS existing_id
      FROM input i),
    idx AS (SELECT look.n, ${nextIndexSql($('family'))} AS i FROM look WHERE NOT look.out_is_deposit AND look.existing_id IS NULL),
    addr AS (
      SELECT idx.n, idx.i AS derivation_index,
             (SELECT d.address FROM derived_addresses d WHERE d.source = ${$('source')}::text AND d.derivation_index = idx.i) AS address
      FROM idx),
    cfg AS (
      INSERT INTO payment_configs (${INSERTED})
      SELECT l.callback_url, l.callback_key, l.callback_host, l.ticker, ${$('family')}::text, a.address, l.address_out, a.derivation_index, l.notify_pending,
        l.notify_confirmations, l.post, l.json, l.convert, l.priority, l.minimum
      FROM look l JOIN addr a ON a.n = l.n
      ORDER BY l.n
      ON CONFLICT DO NOTHING
      RETURNING ${RETURNED}),
    ticker AS (INSERT INTO config_tickers (config_id, ticker) SELECT id, ticker FROM cfg)
    SELECT look.n, look.out_is_deposit, (c.id IS NOT NULL) AS made,
           coalesce(c.id, e.id) AS id, coalesce(c.callback_url, e.callback_url) AS callback_url, coalesce(c.ticker, e.ticker) AS ticker,
           coalesce(c.family, e.family) AS family, coalesce(c.address_in, e.address_in) AS address_in,
           coalesce(c.address_out, e.address_out) AS address_out, coalesce(c.derivation_index, e.derivation_index) AS derivation_index,
           coalesce(c.priority, e.priority) AS priority, coalesce(c.minimum_transaction_base, e.minimum_transaction_base) AS minimum_transaction_base
    FROM look
      LEFT JOIN cfg c ON c.callback_url = look.callback_url
      LEFT JOIN LATERAL (SELECT ${RETURNED} FROM payment_configs WHERE id = look.existing_id AND c.id IS NULL) AS e ON true
    ORDER BY look.n`,
);

/**
 * createConfig for each of `creates` (one derived source, one family, distinct callback wire keys) in one
 * statement: each outcome as createConfig would give it. Throws when the statement fails; then nothing of it
 * was stored but the sequence steps, and each create may be run alone.
 */
export async function createConfigs(db: Db, creates: readonly BatchedCreate[], from: { kind: 'derived'; source: string }, family: string): Promise<CreateOutcome[]> {
  const items = creates.map(({ input, outCanonical }, n) => ({
    n,
    callback_url: input.callbackUrl,
    callback_key: callbackWireKey(input.callbackUrl),
    callback_host: callbackHost(input.callbackUrl),
    ticker: input.ticker,
    address_out: input.addressOut,
    out_canonical: outCanonical,
    notify_pending: input.notifyPending,
    notify_confirmations: input.notifyConfirmations,
    post: input.post,
    json: input.json,
    convert: input.convert,
    priority: input.priority,
    minimum: input.minimumTransactionBase.toString(),
  }));
  const result = await batchStatement(db, { items: JSON.stringify(items), family, source: from.source });
  const outcomes: CreateOutcome[] = [];
  for (const row of rowsOf<OutcomeRow & { n: number }>(result)) outcomes[Number(row.n)] = outcomeOf(row);
  if (outcomes.filter(Boolean).length !== creates.length) throw new Error(`a create batch of ${creates.length} did not answer each`);
  return outcomes;
}
