// Operator CLI over the Temporal client:
//   npm run admin -- show <payment-uuid>     live state of the deposit workflow (status query, why a forward waits) and its execution state
//   npm run admin -- resend <payment-uuid>   redeliver the stored confirmed snapshot (after the six attempts)
//   npm run admin -- export-public-keys      print the account xpubs the API derives deposit addresses from and,
//                                            with DATABASE_URL, publish them (and fill the Solana pool) there
//   npm run admin -- minimum set <ticker> <value>   pin an asset's minimum (whole coins, e.g. 0.05)
//   npm run admin -- minimum clear <ticker>         back to the figure of the minimum-refresh schedule
//   npm run admin -- sweep [filters]                 dry run: balances left at deposit addresses of EVM and Solana
//   npm run admin -- sweep --execute --to treasury|address_out (--ticker t | --address a | --all)   moves them
// TEMPORAL_ADDRESS (default 127.0.0.1:7233, the embedded dev server) and TEMPORAL_NAMESPACE select the cluster;
// a pin (and a sweep) runs as a workflow (`minimumPin`, `sweep`) on TEMPORAL_TASK_QUEUE (default gateway), where the worker holds the database.
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { paymentStatusQuery, resendUpdate } from '../workflows/signals';
import { chainConfigFromEnv } from '../src/chains/config';
import { HdSeed } from '../src/chains/keys';
import { exportPublicKeys } from '../src/addresses/watch-only';
import { loadConfig } from '../src/config';
import { openPostgres } from '../src/db/client';
import { publishPublicMaterial } from '../src/addresses/public-material';
import { findAsset } from '../src/domain/assets';
import { formatUnits, parseUnits } from '../src/domain/money';
import { parseSweep, runSweep, SWEEP_USAGE } from './sweep-cli';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The payment's workflow, by the workflow ID a run with its UUID has. The handle names no run, so it is
 * always the newest one: a payment that waited long has continued as new, and its earlier runs (listed too,
 * in any order) have ended with CONTINUED_AS_NEW while the newest one runs.
 */
export async function findPaymentWorkflow(client: Client, uuid: string): Promise<WorkflowHandle> {
  if (!UUID.test(uuid)) throw new Error(`not a payment UUID: ${uuid}`);
  for await (const wf of client.workflow.list({ query: `GatewayPaymentUuid = "${uuid}"` })) {
    return client.workflow.getHandle(wf.workflowId);
  }
  throw new Error(`no workflow for payment ${uuid} (is the search attribute GatewayPaymentUuid registered?)`);
}

/**
 * The public half of the operator's seed (run where the seed is, i.e. beside the worker): never creates a
 * seed, never prints anything private.
 */
async function exportKeys(out: (line: string) => void, env: NodeJS.ProcessEnv): Promise<number> {
  const cfg = loadConfig(env);
  const file = path.join(cfg.dataDir, 'seed.mnemonic');
  if (!cfg.mnemonic && !cfg.mnemonicFile && !fs.existsSync(file)) {
    out('no seed here: set GATEWAY_MNEMONIC_FILE (or run where the worker keeps DATA_DIR)');
    return 2;
  }
  const seed = HdSeed.loadOrCreate({ mnemonic: cfg.mnemonic, mnemonicFile: cfg.mnemonicFile, dataDir: cfg.dataDir });
  out(JSON.stringify(exportPublicKeys(seed), null, 2));
  if (cfg.databaseUrl) {
    const database = await openPostgres(cfg.databaseUrl);
    try {
      await publishPublicMaterial({ db: database.db, seed, chains: chainConfigFromEnv(env), poolSize: cfg.addressPoolSize, withLock: database.withLock });
    } finally {
      await database.close();
    }
    out('published to the database');
  }
  return 0;
}

const USAGE =
  'usage: npm run admin -- show <payment-uuid> | resend <payment-uuid> | minimum set <ticker> <value> | minimum clear <ticker> | export-public-keys | sweep ...\n' + SWEEP_USAGE;

/** The pin a `minimum set|clear` asks for, checked before anything is sent; a string is the reason it is refused. */
export function parseMinimumPin(args: string[]): { ticker: string; value: string | null } | string {
  const [action, ticker = '', value] = args;
  const asset = findAsset(ticker.toLowerCase());
  if (!asset) return `unknown ticker: ${ticker.slice(0, 64)}`;
  if (action === 'clear' && args.length === 2) return { ticker: asset.ticker, value: null };
  if (action !== 'set' || args.length !== 3 || value === undefined) return USAGE;
  let base: bigint;
  try {
    base = parseUnits(value, asset.decimals);
  } catch (e) {
    return `${asset.ticker} minimum: ${(e as Error).message}`;
  }
  const floor = parseUnits(asset.minimumFloor, asset.decimals);
  if (base < floor) return `${asset.ticker} minimum may not be below the registry floor ${formatUnits(floor, asset.decimals)}`;
  return { ticker: asset.ticker, value: formatUnits(base, asset.decimals) };
}

async function pinMinimum(client: Client, pin: { ticker: string; value: string | null }, out: (line: string) => void): Promise<void> {
  const result = await client.workflow.execute('minimumPin', {
    taskQueue: process.env.TEMPORAL_TASK_QUEUE || 'gateway',
    workflowId: `minimum-pin:${pin.ticker}:${Date.now()}`,
    args: [pin],
    workflowExecutionTimeout: '1 minute',
  });
  const r = result as { ticker: string; pinned: string | null };
  out(r.pinned === null ? `${r.ticker}: pin cleared; the minimum-refresh figure applies` : `${r.ticker}: minimum pinned at ${r.pinned}`);
}

/** A client of the cluster TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE name, for the length of fn. */
async function withClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS || '127.0.0.1:7233' });
  try {
    return await fn(new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE || 'default' }));
  } finally {
    await connection.close();
  }
}

export async function runAdmin(argv: string[], out: (line: string) => void = console.log, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [command, uuid] = argv;
  if (command === 'export-public-keys') return exportKeys(out, env);
  if (command === 'minimum') {
    const pin = parseMinimumPin(argv.slice(1));
    if (typeof pin === 'string') {
      out(pin);
      return 2;
    }
    return withClient(async (client) => {
      await pinMinimum(client, pin, out);
      return 0;
    });
  }
  if (command === 'sweep') {
    const parsed = parseSweep(argv.slice(1));
    if (typeof parsed === 'string') {
      out(parsed);
      return 2;
    }
    return withClient((client) => runSweep(client, parsed, process.env.TEMPORAL_TASK_QUEUE || 'gateway', out));
  }
  if (!['show', 'resend'].includes(command ?? '') || !uuid) {
    out(USAGE);
    return 2;
  }
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS || '127.0.0.1:7233' });
  try {
    const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE || 'default' });
    const handle = await findPaymentWorkflow(client, uuid);
    if (command === 'show') {
      await show(handle, out);
    } else {
      return await resend(handle, uuid, out);
    }
    return 0;
  } finally {
    await connection.close();
  }
}

/**
 * The payment's live state: the workflow's status query (with `waiting`, the reason a forward waits to be
 * tried again, and when), its execution status, and the last failure of each activity it is retrying (the
 * Temporal UI shows the same).
 */
export async function show(handle: WorkflowHandle, out: (line: string) => void): Promise<void> {
  const description = await handle.describe();
  const status = await handle.query(paymentStatusQuery);
  const retrying = (description.raw.pendingActivities ?? [])
    .filter((a) => a.lastFailure)
    .map((a) => ({ activity: a.activityType?.name ?? null, attempt: a.attempt ?? null, lastFailure: a.lastFailure?.message ?? null }));
  if (status.waiting) out(`forward waiting (${status.waiting.type}): ${status.waiting.reason}; next try ${status.waiting.nextTry}`);
  out(JSON.stringify({ workflowId: handle.workflowId, execution: description.status.name, status, ...(retrying.length ? { retrying } : {}) }, null, 2));
}

/**
 * Queues a resend and says what happened: the payment workflow answers the `resend` update, or refuses it
 * with the reason. Exit code 1 when nothing was queued.
 */
export async function resend(handle: WorkflowHandle, uuid: string, out: (line: string) => void): Promise<number> {
  const description = await handle.describe();
  if (description.status.name !== 'RUNNING') {
    out(`resend refused: the workflow of payment ${uuid} has ended (${description.status.name}); nothing listens for resends`);
    return 1;
  }
  try {
    out((await handle.executeUpdate(resendUpdate)).message);
    return 0;
  } catch (e) {
    if (!(e instanceof WorkflowUpdateFailedError)) throw e;
    out(`resend refused: ${e.cause instanceof Error ? e.cause.message : e.message}`);
    return 1;
  }
}

if (require.main === module) {
  runAdmin(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(e instanceof Error ? e.message : String(e));
      process.exit(1);
    },
  );
}
