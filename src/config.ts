import path from 'node:path';
import { z } from 'zod';

/** Boolean env values: only the spellings an operator would type on purpose. */
const envBool = (name: string) =>
  z
    .enum(['true', 'false', '1', '0'], { error: `${name} must be one of true, false, 1, 0` })
    .transform((v) => v === 'true' || v === '1');

const port = (name: string) =>
  z
    .string()
    .regex(/^\d+$/, { error: `${name} must be an integer between 1 and 65535` })
    .transform(Number)
    .refine((n) => n >= 1 && n <= 65535, { error: `${name} must be an integer between 1 and 65535` });

const millis = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { error: `${name} must be a whole number of milliseconds` })
    .transform(Number)
    .refine((n) => n >= min && n <= max, { error: `${name} must be between ${min} and ${max}` });

const integer = (name: string, min: number, max: number) => {
  const error = `${name} must be an integer between ${min} and ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

/** The Temporal SDK's log levels (its LogLevel), in any case. */
const SDK_LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type SdkLogLevel = (typeof SDK_LOG_LEVELS)[number];
const sdkLogLevel = (name: string) =>
  z
    .string()
    .transform((v) => v.toUpperCase())
    .pipe(z.enum(SDK_LOG_LEVELS, { error: `${name} must be one of ${SDK_LOG_LEVELS.join(', ')}` }));

/** Five minutes: fees move within minutes; a schedule run costs one fee estimate per served asset. */
export const DEFAULT_MINIMUM_REFRESH_MS = 300_000;

/** A task queue name the gateway accepts: `WORKER_TASK_QUEUE`, `{NETWORK}_TASK_QUEUE` (src/chains/config.ts). */
export const TASK_QUEUE_NAME = /^[A-Za-z0-9._-]{1,200}$/;

const nonEmpty = (name: string) => z.string().min(1, { error: `${name} must not be empty` });

const schema = z.object({
  PORT: port('PORT').default(8080),
  HOST: nonEmpty('HOST').default('127.0.0.1'),
  DATA_DIR: nonEmpty('DATA_DIR').default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { error: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
    .optional(),
  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^\s:]+:\d+$/, { error: 'TEMPORAL_ADDRESS must be host:port' })
    .optional(),
  TEMPORAL_NAMESPACE: nonEmpty('TEMPORAL_NAMESPACE').default('default'),
  TEMPORAL_TASK_QUEUE: nonEmpty('TEMPORAL_TASK_QUEUE').default('gateway'),
  TEMPORAL_CLI_PATH: nonEmpty('TEMPORAL_CLI_PATH').optional(),
  TEMPORAL_TEST_SERVER_PATH: nonEmpty('TEMPORAL_TEST_SERVER_PATH').optional(),
  TEMPORAL_UI_PORT: port('TEMPORAL_UI_PORT').optional(),
  CALLBACK_ALLOW_PRIVATE: envBool('CALLBACK_ALLOW_PRIVATE').default(false),
  CALLBACK_ALLOW_HTTP: envBool('CALLBACK_ALLOW_HTTP').optional(),
  CALLBACK_TIMEOUT_MS: millis('CALLBACK_TIMEOUT_MS', 100, 120_000).default(15_000),
  SIGNING_KEY_FILE: nonEmpty('SIGNING_KEY_FILE').optional(),
  SIGNING_KEY_PEM: nonEmpty('SIGNING_KEY_PEM').optional(),
  GATEWAY_MNEMONIC: nonEmpty('GATEWAY_MNEMONIC').optional(),
  GATEWAY_MNEMONIC_FILE: nonEmpty('GATEWAY_MNEMONIC_FILE').optional(),
  METRICS_PORT: port('METRICS_PORT').optional(),
  EMBEDDED_API: z.enum(['thread', 'process'], { error: 'EMBEDDED_API must be thread or process' }).default('thread'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { error: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent' }).default('info'),
  // The Temporal SDK's own lines, and its core's (at DEBUG the core names each workflow task it received).
  TEMPORAL_LOG_LEVEL: sdkLogLevel('TEMPORAL_LOG_LEVEL').default('WARN'),
  TEMPORAL_CORE_LOG_LEVEL: sdkLogLevel('TEMPORAL_CORE_LOG_LEVEL').default('WARN'),
  TEMPORAL_SERVER_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error'], { error: 'TEMPORAL_SERVER_LOG_LEVEL must be one of debug, info, warn, error' }).default('warn'),
  FEE_DOMAIN_OVERRIDES: z
    .string()
    .regex(/^[a-z0-9.-]+=\d+(\.\d{1,2})?(,[a-z0-9.-]+=\d+(\.\d{1,2})?)*$/i, {
      error: 'FEE_DOMAIN_OVERRIDES must be host=percent pairs separated by commas, e.g. shop.example=0.50',
    })
    .optional(),
  // How often each network's watcher asks its node for new blocks: a pass that finds none reads the head and
  // the cursor's block and writes nothing; the hints it pushes are at most this late after a block.
  WATCH_INTERVAL_MS: millis('WATCH_INTERVAL_MS', 100, 600_000).default(500),
  // The same while the network's head feed ({NETWORK}_WS_URL or _HEAD_FEED) is live: its new heads wake the watcher, and
  // this poll only covers a notification lost on the way.
  WATCH_FEED_INTERVAL_MS: millis('WATCH_FEED_INTERVAL_MS', 100, 600_000).default(5_000),
  // How long the forward activity watches, at each new head, for the inclusion of a forward it has just
  // broadcast (networks with a live head feed), before it leaves that to the watcher's hint. 0: never.
  // At most 6 s: a local activity past 8 s makes the worker heartbeat its workflow task (more history).
  FORWARD_WATCH_MS: millis('FORWARD_WATCH_MS', 0, 6_000).default(4_000),
  // The worker process's CPU priority (nice). Where the worker shares cores with the Temporal server and
  // PostgreSQL, a saturated worker must not starve them: the server gives the recording of a workflow task's
  // start 1 s, and a start recorded later is lost until the task's timeout (ops/temporal/config.yaml).
  WORKER_NICE: integer('WORKER_NICE', 0, 19).default(10),
  // The task queue a worker-only process serves, when not TEMPORAL_TASK_QUEUE: the queue that one or more networks'
  // deposit workflows run on ({NETWORK}_TASK_QUEUE), so that a burst on other networks does not hold them up.
  WORKER_TASK_QUEUE: z.string().regex(TASK_QUEUE_NAME, { error: 'WORKER_TASK_QUEUE must be a task queue name (letters, digits, . _ -)' }).optional(),
  ADDRESS_POOL_SIZE: integer('ADDRESS_POOL_SIZE', 1, 100_000).default(1000),
  // Creates one client may make per minute (a bucket of that many, refilled at that rate); 0 turns the limit off.
  CREATE_RATE_LIMIT: integer('CREATE_RATE_LIMIT', 0, 1_000_000).default(120),
  // Express's `trust proxy`: which proxies' X-Forwarded-For names the client (a hop count, or addresses and
  // subnets such as `loopback, 10.0.0.0/8`). Unset: the connection's own address is the client.
  TRUST_PROXY: z.string().max(1000).optional(),
  DEVNET: envBool('DEVNET').optional(),
  PRICE_SOURCE_URL: z
    .string()
    .regex(/^https?:\/\/.*\{symbol\}/, { error: 'PRICE_SOURCE_URL must be an http(s) URL containing {symbol}' })
    .optional(),
  PRICE_SOURCE: z.enum(['none'], { error: 'PRICE_SOURCE must be none (or leave it unset and set PRICE_SOURCE_URL)' }).optional(),
  MINIMUM_REFRESH_MS: millis('MINIMUM_REFRESH_MS', 1000, 86_400_000).default(DEFAULT_MINIMUM_REFRESH_MS),
  MINIMUM_MAX_COST_PERCENT: z
    .string()
    .regex(/^\d{1,3}(\.\d{1,2})?$/, { error: 'MINIMUM_MAX_COST_PERCENT must be a percentage with at most two decimals, e.g. 5 or 2.5' })
    .refine((v) => Number(v) > 0 && Number(v) <= 100, { error: 'MINIMUM_MAX_COST_PERCENT must be above 0 and at most 100' })
    .default('5'),
  // The highest compute-unit price a Solana forward pays (micro-lamports per unit); it pays the recent price below it.
  SOLANA_PRIORITY_FEE_MAX_MICROLAMPORTS: z
    .string()
    .regex(/^\d{1,15}$/, { error: 'SOLANA_PRIORITY_FEE_MAX_MICROLAMPORTS must be a whole number of micro-lamports' })
    .default('1000000'),
});

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  temporalAddress: string | undefined;
  temporalNamespace: string;
  taskQueue: string;
  /** WORKER_TASK_QUEUE: the queue a worker-only process serves instead of taskQueue (src/runtime/task-queues.ts). */
  workerTaskQueue: string | undefined;
  temporalCliPath: string | undefined;
  temporalTestServerPath: string | undefined;
  temporalUiPort: number | undefined;
  callbackAllowPrivate: boolean;
  /** http:// callback URLs accepted; defaults to true only when private destinations are allowed (local use). */
  callbackAllowHttp: boolean;
  callbackTimeoutMs: number;
  /** RSA private key for callback signatures: a PEM file, or the PEM itself; unset → generated into DATA_DIR. */
  signingKeyFile: string | undefined;
  signingKeyPem: string | undefined;
  /** Operator HD seed; unset → generated into DATA_DIR/seed.mnemonic (0600). Never logged. */
  mnemonic: string | undefined;
  mnemonicFile: string | undefined;
  /** Admin port serving /metrics; unset → no metrics server (the embedded default), compose sets 9464. */
  metricsPort: number | undefined;
  /** npm start only: the API in a thread of its own (default), or on the main thread beside the worker. */
  embeddedApi: 'thread' | 'process';
  logLevel: string;
  /** Temporal SDK and SDK core log levels (installQuietRuntime), and the embedded dev server's. */
  temporalLogLevel: SdkLogLevel;
  temporalCoreLogLevel: SdkLogLevel;
  temporalServerLogLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Production USDT quotes: GET this URL with {symbol} replaced. */
  priceSourceUrl: string | undefined;
  /** PRICE_SOURCE=none: the operator runs without quotes on purpose (prices omitted, priced costs wait). */
  priceSourceNone: boolean;
  /** Contracted fee percentage per callback host (lowercase), overriding the volume tiers. */
  feeDomainOverrides: Record<string, string>;
  /** How often each network's watcher looks for new blocks. */
  watchIntervalMs: number;
  /** The same while the network's head feed is live. */
  watchFeedIntervalMs: number;
  /** How long a forward just broadcast is watched for by its activity at each new head (0: not). */
  forwardWatchMs: number;
  /** CPU priority (nice) the worker process takes at start; 0 leaves it. */
  workerNice: number;
  /** Free pre-derived Solana deposit addresses the worker keeps for the API (no public derivation there). */
  addressPoolSize: number;
  /** Creates per minute per client (0: no limit). */
  createRateLimit: number;
  /** Express's `trust proxy` value: a hop count, or a list of trusted proxy addresses; undefined trusts none. */
  trustProxy: number | string | undefined;
  /** npm start runs local chains (anvil, surfnet, litecoind); default: when no {NETWORK}_RPC_URL is set. */
  devnet: boolean | undefined;
  /** How often the `minimum-refresh` Temporal schedule recomputes every served asset's minimum. */
  minimumRefreshMs: number;
  /** The forwarding cost may be at most this percentage of the minimum (two decimals, e.g. "5.00"). */
  minimumMaxCostPercent: string;
  /** Cap on a Solana forward's compute-unit price, micro-lamports (SOLANA_PRIORITY_FEE_MAX_MICROLAMPORTS). */
  solanaPriorityFeeMax: bigint;
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Empty strings count as unset, so `FOO= npm start` behaves like not setting FOO. */
function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') out[key] = v;
  }
  return out;
}

/** "5" → "5.00", "2.5" → "2.50" (input already checked to have at most two decimals). */
function twoDecimals(pct: string): string {
  const [whole, frac = ''] = pct.split('.');
  return `${whole}.${frac.padEnd(2, '0')}`;
}

/** Parses the environment; throws ConfigError whose message is one line naming the variable and the rule. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(definedOnly(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue.path[0] ?? 'environment');
    const rule = issue.message.startsWith(variable) ? issue.message : `${variable}: ${issue.message}`;
    throw new ConfigError(`invalid configuration: ${rule}`);
  }
  const c = parsed.data;
  if (c.PRICE_SOURCE_URL && c.PRICE_SOURCE) throw new ConfigError('invalid configuration: set PRICE_SOURCE_URL or PRICE_SOURCE=none, not both');
  return {
    port: c.PORT,
    host: c.HOST,
    dataDir: path.resolve(c.DATA_DIR),
    databaseUrl: c.DATABASE_URL,
    temporalAddress: c.TEMPORAL_ADDRESS,
    temporalNamespace: c.TEMPORAL_NAMESPACE,
    taskQueue: c.TEMPORAL_TASK_QUEUE,
    workerTaskQueue: c.WORKER_TASK_QUEUE,
    temporalCliPath: c.TEMPORAL_CLI_PATH,
    temporalTestServerPath: c.TEMPORAL_TEST_SERVER_PATH,
    temporalUiPort: c.TEMPORAL_UI_PORT,
    callbackAllowPrivate: c.CALLBACK_ALLOW_PRIVATE,
    callbackAllowHttp: c.CALLBACK_ALLOW_HTTP ?? c.CALLBACK_ALLOW_PRIVATE,
    callbackTimeoutMs: c.CALLBACK_TIMEOUT_MS,
    signingKeyFile: c.SIGNING_KEY_FILE,
    signingKeyPem: c.SIGNING_KEY_PEM,
    mnemonic: c.GATEWAY_MNEMONIC,
    mnemonicFile: c.GATEWAY_MNEMONIC_FILE,
    metricsPort: c.METRICS_PORT,
    embeddedApi: c.EMBEDDED_API,
    logLevel: c.LOG_LEVEL,
    temporalLogLevel: c.TEMPORAL_LOG_LEVEL,
    temporalCoreLogLevel: c.TEMPORAL_CORE_LOG_LEVEL,
    temporalServerLogLevel: c.TEMPORAL_SERVER_LOG_LEVEL,
    priceSourceUrl: c.PRICE_SOURCE_URL,
    priceSourceNone: c.PRICE_SOURCE === 'none',
    feeDomainOverrides: Object.fromEntries(
      (c.FEE_DOMAIN_OVERRIDES ?? '')
        .split(',')
        .filter(Boolean)
        .map((pair) => {
          const [host, pct] = pair.split('=');
          const [whole, frac = ''] = pct.split('.');
          return [host.toLowerCase(), `${whole}.${frac.padEnd(2, '0')}`];
        }),
    ),
    watchIntervalMs: c.WATCH_INTERVAL_MS,
    watchFeedIntervalMs: c.WATCH_FEED_INTERVAL_MS,
    forwardWatchMs: c.FORWARD_WATCH_MS,
    workerNice: c.WORKER_NICE,
    addressPoolSize: c.ADDRESS_POOL_SIZE,
    createRateLimit: c.CREATE_RATE_LIMIT,
    trustProxy: c.TRUST_PROXY === undefined ? undefined : /^\d+$/.test(c.TRUST_PROXY.trim()) ? Number(c.TRUST_PROXY) : c.TRUST_PROXY,
    devnet: c.DEVNET,
    minimumRefreshMs: c.MINIMUM_REFRESH_MS,
    minimumMaxCostPercent: twoDecimals(c.MINIMUM_MAX_COST_PERCENT),
    solanaPriorityFeeMax: BigInt(c.SOLANA_PRIORITY_FEE_MAX_MICROLAMPORTS),
  };
}

/** The variables the config schema knows; the compose-file test checks against this list. */
export const CONFIG_VARIABLES = Object.keys(schema.shape);
