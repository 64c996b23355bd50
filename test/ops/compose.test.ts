import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config';
import { chainConfigFromEnv } from '../../src/chains/config';
import { refuseSecrets } from '../../src/runtime/services';
import { workerAssignment } from '../../src/runtime/task-queues';
import { SEARCH_ATTRIBUTES } from '../../src/domain/search-attributes';
import { gatewayWorkflows } from '../helpers/temporal';
import { OPS_DIR, TEMPORAL_SERVER_VERSION, temporalServerEnv } from '../helpers/temporal-server';

/** Docker cannot run here, so the compose file and Dockerfile are checked against the code they deploy. */
const root = path.resolve(__dirname, '../..');
type Service = {
  image?: string; build?: string; command?: string[] | string; entrypoint?: string[]; environment?: Record<string, string>;
  ports?: string[]; volumes?: string[]; healthcheck?: { test: string[] }; depends_on?: Record<string, { condition: string }>; secrets?: string[];
};
const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>; volumes: Record<string, unknown>; secrets: Record<string, { file: string }>;
};
const services = compose.services;
const gateway = ['gateway-api', 'gateway-worker', 'gateway-worker-utxo'] as const;
/** Variables read outside src/config.ts: per network (src/chains/config.ts) and the worker's poll interval. */
const extraVariables = /^([A-Z]+_RPC_URL|[A-Z]+_WS_URL|[A-Z]+_HEAD_FEED|[A-Z]+_TASK_QUEUE|[A-Z]+_CHAIN|[A-Z0-9]+_[A-Z0-9]+_CONTRACT|DEPOSIT_POLL_INTERVAL)$/;

/** ${VAR:?msg} and ${VAR:-default} with sample values, as compose would substitute from an .env file. */
function substitute(value: string): string {
  return value.replace(/\$\{([A-Z_]+)(:[?-])?([^}]*)\}/g, (_m, name: string, op: string | undefined, rest: string) => {
    if (name === 'POSTGRES_PASSWORD') return 'sample-password';
    if (name === 'API_DATABASE_PASSWORD') return 'sample-api-password';
    return op === ':-' ? rest : '';
  });
}

describe('docker-compose.yml', () => {
  it('has every service of the production topology', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['gateway-api', 'gateway-api-role', 'gateway-worker', 'gateway-worker-utxo', 'postgres', 'temporal', 'temporal-schema', 'temporal-setup', 'temporal-ui'].sort(),
    );
    expect(services.postgres.image).toMatch(/^postgres:/);
    expect(services['temporal-schema'].image).toMatch(/^temporalio\/admin-tools:/);
    expect(services.temporal.image).toMatch(/^temporalio\/server:/);
    expect(services.temporal.environment).toMatchObject({ POSTGRES_SEEDS: 'postgres' });
    expect(Number(services.temporal.environment!.NUM_HISTORY_SHARDS)).toBeGreaterThanOrEqual(128);
    expect(services['temporal-ui'].image).toMatch(/^temporalio\/ui:/);
  });

  it('long-running services have health checks; dependencies wait for them', () => {
    for (const name of ['postgres', 'temporal', 'temporal-ui', 'gateway-api', 'gateway-worker', 'gateway-worker-utxo']) {
      expect(services[name].healthcheck?.test?.length).toBeGreaterThan(0);
    }
    expect(services.temporal.depends_on!['temporal-schema'].condition).toBe('service_completed_successfully');
    for (const g of gateway) {
      expect(services[g].depends_on!.postgres.condition).toBe('service_healthy');
      expect(services[g].depends_on!['temporal-setup'].condition).toBe('service_completed_successfully');
    }
  });

  it('keeps data in named volumes', () => {
    expect(services.postgres.volumes).toContain('pgdata:/var/lib/postgresql/data');
    for (const v of Object.values(services).flatMap((s) => s.volumes ?? [])) {
      const named = v.split(':')[0];
      if (!named.startsWith('.') && !named.startsWith('/')) expect(compose.volumes).toHaveProperty(named);
    }
  });

  it('registers exactly the search attributes the workflows set, in the namespace the gateway uses', () => {
    const script = fs.readFileSync(path.join(OPS_DIR, 'setup-namespace.sh'), 'utf8');
    const registered = [...script.matchAll(/--name (\w+) --type (\w+)/g)].map((m) => `${m[1]}=${m[2]}`).sort();
    expect(registered).toEqual(SEARCH_ATTRIBUTES.map((sa) => `${sa.name}=Keyword`).sort());
    expect(services['temporal-setup'].environment!.TEMPORAL_NAMESPACE).toBe(services['gateway-worker'].environment!.TEMPORAL_NAMESPACE);
  });

  it.each(gateway)('%s: every variable is one the gateway reads, and the values pass its config schema', (name) => {
    const env = services[name].environment!;
    for (const key of Object.keys(env)) {
      expect(CONFIG_VARIABLES.includes(key) || extraVariables.test(key) ? key : `unknown variable ${key}`).toBe(key);
    }
    const substituted = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, substitute(String(v))]));
    const cfg = loadConfig(substituted);
    // The worker as the owner (it migrates), the API as its own role (drizzle/0000_init.sql).
    expect(cfg.databaseUrl).toBe(name === 'gateway-api' ? 'postgres://gateway_api:sample-api-password@postgres:5432/gateway' : 'postgres://gateway:sample-password@postgres:5432/gateway');
    expect(cfg.temporalAddress).toBe('temporal:7233');
    expect(cfg.callbackAllowPrivate).toBe(false);
    expect(cfg.metricsPort).toBe(9464);
    expect(() => chainConfigFromEnv(substituted)).not.toThrow();
  });

  it('the API logs in as its own role once the worker has migrated: ops/postgres/api-role.sh after a healthy worker', () => {
    const role = services['gateway-api-role'];
    expect(role.entrypoint).toEqual(['/bin/sh', '/etc/gateway-postgres/api-role.sh']);
    expect(role.volumes).toContain('./ops/postgres:/etc/gateway-postgres:ro');
    expect(role.depends_on!['gateway-worker'].condition).toBe('service_healthy');
    expect(role.environment).toMatchObject({ PGHOST: 'postgres', PGUSER: 'gateway', PGDATABASE: 'gateway' });
    for (const [k, v] of Object.entries(role.environment!)) if (/PASSWORD/.test(k)) expect(v).toMatch(/^\$\{/);
    expect(services['gateway-api'].depends_on!['gateway-api-role'].condition).toBe('service_completed_successfully');
    expect(services['gateway-worker'].depends_on).not.toHaveProperty('gateway-api');
    expect(fs.existsSync(path.join(root, 'ops/postgres/api-role.sh'))).toBe(true);
  });

  it('publishes the API port the config names, and metrics only on loopback', () => {
    const api = services['gateway-api'];
    expect(api.ports).toContain(`${api.environment!.PORT}:${api.environment!.PORT}`);
    for (const g of gateway) {
      const metrics = services[g].ports!.find((p) => p.endsWith(':9464'))!;
      expect(metrics.startsWith('127.0.0.1:')).toBe(true);
    }
  });

  it('the opt-in UTXO worker is the worker on a task queue of its own, for the networks .env puts there', () => {
    const worker = services['gateway-worker'];
    const utxo = services['gateway-worker-utxo'] as Service & { profiles?: string[] };
    expect(utxo.profiles).toEqual(['utxo-worker']);
    for (const k of ['image', 'command', 'secrets', 'volumes', 'depends_on', 'healthcheck'] as const) expect(utxo[k]).toEqual(worker[k]);
    const { WORKER_TASK_QUEUE, WORKER_NICE, ...rest } = utxo.environment!;
    expect(rest).toEqual(worker.environment);
    expect([WORKER_TASK_QUEUE, WORKER_NICE]).toEqual(['gateway-utxo', '0']);
    // With LITECOIN_TASK_QUEUE=gateway-utxo in .env: the UTXO worker serves Litecoin, gateway-worker the rest.
    const envOf = (s: Service) => ({
      ...Object.fromEntries(Object.entries(s.environment!).map(([k, v]) => [k, substitute(String(v))])),
      ETHEREUM_RPC_URL: 'http://eth:8545', LITECOIN_RPC_URL: 'http://ltc:9332', LITECOIN_TASK_QUEUE: 'gateway-utxo',
    });
    const serves = (s: Service) => workerAssignment(loadConfig(envOf(s)), chainConfigFromEnv(envOf(s)), 'worker');
    expect(serves(utxo)).toEqual({ taskQueue: 'gateway-utxo', networks: ['litecoin'], ownsSchedule: false });
    expect(serves(worker)).toEqual({ taskQueue: 'gateway', networks: ['ethereum'], ownsSchedule: true });
  });

  it('runs API and worker from one image with the entry points that exist', () => {
    const api = services['gateway-api'];
    const worker = services['gateway-worker'];
    expect(api.build).toBe('.');
    expect(worker.image).toBe(api.image);
    for (const [svc, entry] of [[api, 'api'], [worker, 'worker']] as const) {
      expect(svc.command).toEqual(['node', `dist/src/entry/${entry}.js`]);
      expect(fs.existsSync(path.join(root, `src/entry/${entry}.ts`))).toBe(true);
    }
  });

  it('holds no secret: passwords from the environment, seed and signing key from files mounted into the worker only', () => {
    const text = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    expect(text).not.toMatch(/BEGIN [A-Z ]*PRIVATE KEY|(\b[a-z]+\b ){11}\b[a-z]+\b/);
    for (const [k, v] of Object.entries(services.postgres.environment!)) if (/PASSWORD/.test(k)) expect(v).toMatch(/^\$\{/);
    const worker = services['gateway-worker'].environment!;
    expect(worker.SIGNING_KEY_FILE).toMatch(/^\/run\/secrets\//);
    expect(worker.GATEWAY_MNEMONIC_FILE).toMatch(/^\/run\/secrets\//);
    expect(services['gateway-worker'].secrets!.sort()).toEqual(['hd_mnemonic', 'signing_key']);
    for (const g of gateway) {
      const env = services[g].environment!;
      expect(env).not.toHaveProperty('GATEWAY_MNEMONIC');
      expect(env).not.toHaveProperty('SIGNING_KEY_PEM');
    }
    // The internet-facing API: no secret mounted, no variable naming one, no volume where one could lie.
    const api = services['gateway-api'];
    expect(api.secrets ?? []).toEqual([]);
    expect(api.volumes ?? []).toEqual([]);
    for (const k of ['SIGNING_KEY_FILE', 'GATEWAY_MNEMONIC_FILE', 'GATEWAY_MNEMONIC', 'SIGNING_KEY_PEM']) expect(api.environment).not.toHaveProperty(k);
    expect(() => refuseSecrets(loadConfig(Object.fromEntries(Object.entries(api.environment!).map(([k, v]) => [k, substitute(String(v))]))))).not.toThrow();
    expect(Object.values(compose.secrets).every((s) => s.file.startsWith('./secrets/'))).toBe(true);
  });
});

/**
 * The production-topology tests (test/helpers/temporal-server.ts) start the Temporal server that compose
 * runs: the same version (ops/temporal/VERSION, built by scripts/setup-temporal-server.js) and the same
 * configuration files and setup scripts from ops/temporal; only addresses, ports and passwords differ.
 */
describe('Temporal server: docker-compose.yml and the production-topology tests agree', () => {
  const mount = './ops/temporal:/etc/gateway-temporal:ro';
  const template = fs.readFileSync(path.join(OPS_DIR, 'config.yaml'), 'utf8');
  /** Every variable config.yaml reads, and those it refuses to run without. */
  const templateVariables = new Set([...template.matchAll(/env "([A-Z_]+)"/g)].map((m) => m[1]));
  const required = /range list ((?:"[A-Z_]+" ?)+)/.exec(template)![1].match(/[A-Z_]+/g)!;
  const env = services.temporal.environment!;

  it('runs the server and admin tools of the version the tests build', () => {
    expect(TEMPORAL_SERVER_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
    expect(services.temporal.image).toBe(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
    expect(services['temporal-schema'].image).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`);
    expect(services['temporal-setup'].image).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`);
  });

  it('starts the server with ops/temporal/config.yaml and its dynamic config, mounted read-only', () => {
    expect(services.temporal.volumes).toContain(mount);
    expect(env.TEMPORAL_SERVER_CONFIG_FILE_PATH).toBe('/etc/gateway-temporal/config.yaml');
    expect(env.DYNAMIC_CONFIG_FILE_PATH).toBe('/etc/gateway-temporal/dynamicconfig.yaml');
    expect(template.split('\n')[0]).toBe('# enable-template');
  });

  it('sets every variable the configuration requires, and none it does not read', () => {
    for (const v of required) expect({ v, set: Boolean(env[v]) }).toEqual({ v, set: true });
    const imageVariables = ['TEMPORAL_SERVER_CONFIG_FILE_PATH', 'TEMPORAL_ALLOW_NO_AUTH'];
    for (const k of Object.keys(env)) expect(templateVariables.has(k) || imageVariables.includes(k) ? k : `unread ${k}`).toBe(k);
  });

  it('the tests run the server with the same settings; only addresses and ports differ', () => {
    const test = temporalServerEnv({ pgUrl: 'postgres://postgres:pw@127.0.0.1:5999/postgres' });
    const placement = /^(POSTGRES_SEEDS|DB_PORT|POSTGRES_USER|POSTGRES_PWD|BIND_ON_IP|TEMPORAL_BROADCAST_ADDRESS|DYNAMIC_CONFIG_FILE_PATH|TEMPORAL_SERVER_CONFIG_FILE_PATH|LOG_LEVEL|[A-Z_]+_PORT)$/;
    const decisive = (e: Record<string, string>) => Object.fromEntries(Object.entries(e).filter(([k]) => !placement.test(k)));
    expect(decisive(test)).toEqual(decisive(env));
    for (const v of required) expect({ v, set: Boolean(test[v]) }).toEqual({ v, set: true });
    expect(path.basename(test.DYNAMIC_CONFIG_FILE_PATH)).toBe(path.basename(env.DYNAMIC_CONFIG_FILE_PATH));
  });

  it('makes the schema and the namespace with the scripts the tests run', () => {
    expect(services['temporal-schema'].volumes).toContain(mount);
    expect(services['temporal-schema'].entrypoint).toEqual(['/bin/sh', '/etc/gateway-temporal/setup-schema.sh']);
    expect(services['temporal-setup'].volumes).toContain(mount);
    expect(services['temporal-setup'].entrypoint).toEqual(['/bin/sh', '/etc/gateway-temporal/setup-namespace.sh']);
    expect(services['temporal-schema'].environment).toMatchObject({ SQL_PLUGIN: 'postgres12', SQL_HOST: 'postgres', SQL_USER: 'gateway' });
    for (const f of ['setup-schema.sh', 'setup-namespace.sh', 'dynamicconfig.yaml']) expect(fs.existsSync(path.join(OPS_DIR, f))).toBe(true);
  });
});

describe('Dockerfile', () => {
  const text = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  it('is multi-stage, builds the workflow bundle, ships production dependencies only and runs as non-root', () => {
    expect(text.match(/^FROM /gm)).toHaveLength(2);
    expect(text).toMatch(/scripts\/bundle-workflows\.js/);
    expect(text).toMatch(/npm prune --omit=dev/);
    expect(text).toMatch(/rm -rf dist\/devnet/);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toMatch(/COPY --from=build \/app\/drizzle \.\/dist\/drizzle/);
  });

  it('the workflow bundle the image builds at build time builds from the workflows here', async () => {
    const { code } = (await gatewayWorkflows()).workflowBundle;
    expect(code).toContain('paymentLifecycle');
  }, 120_000);
});
