import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config';
import { chainConfigFromEnv } from '../../src/chains/config';
import { refuseSecrets } from '../../src/runtime/services';
import { SEARCH_ATTRIBUTES } from '../../src/domain/search-attributes';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsEntry } from '../../src/temporal/worker';

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
const gateway = ['gateway-api', 'gateway-worker'] as const;
/** Variables read outside src/config.ts: chain endpoints (src/chains/config.ts) and the worker's poll interval. */
const extraVariables = /^([A-Z]+_RPC_URL|[A-Z]+_CHAIN|[A-Z0-9]+_[A-Z0-9]+_CONTRACT|DEPOSIT_POLL_INTERVAL)$/;

/** ${VAR:?msg} and ${VAR:-default} with sample values, as compose would substitute from an .env file. */
function substitute(value: string): string {
  return value.replace(/\$\{([A-Z_]+)(:[?-])?([^}]*)\}/g, (_m, name: string, op: string | undefined, rest: string) => {
    if (name === 'POSTGRES_PASSWORD') return 'sample-password';
    return op === ':-' ? rest : '';
  });
}

describe('docker-compose.yml', () => {
  it('has every service of the production topology', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['gateway-api', 'gateway-worker', 'postgres', 'temporal', 'temporal-schema', 'temporal-setup', 'temporal-ui'].sort(),
    );
    expect(services.postgres.image).toMatch(/^postgres:/);
    expect(services['temporal-schema'].image).toMatch(/^temporalio\/admin-tools:/);
    expect(String(services['temporal-schema'].command)).toContain('temporal-sql-tool');
    expect(services.temporal.image).toMatch(/^temporalio\/server:/);
    expect(services.temporal.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgres' });
    expect(Number(services.temporal.environment!.NUM_HISTORY_SHARDS)).toBeGreaterThanOrEqual(128);
    expect(services['temporal-ui'].image).toMatch(/^temporalio\/ui:/);
  });

  it('long-running services have health checks; dependencies wait for them', () => {
    for (const name of ['postgres', 'temporal', 'temporal-ui', 'gateway-api', 'gateway-worker']) {
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

  it('registers exactly the search attributes the workflows set', () => {
    const cmd = String(services['temporal-setup'].command);
    for (const sa of SEARCH_ATTRIBUTES) expect(cmd).toContain(sa.name);
    expect(cmd).toContain('--type Keyword');
  });

  it.each(gateway)('%s: every variable is one the gateway reads, and the values pass its config schema', (name) => {
    const env = services[name].environment!;
    for (const key of Object.keys(env)) {
      expect(CONFIG_VARIABLES.includes(key) || extraVariables.test(key) ? key : `unknown variable ${key}`).toBe(key);
    }
    const substituted = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, substitute(String(v))]));
    const cfg = loadConfig(substituted);
    expect(cfg.databaseUrl).toMatch(/^postgres:\/\/gateway:sample-password@postgres:5432\/gateway$/);
    expect(cfg.temporalAddress).toBe('temporal:7233');
    expect(cfg.callbackAllowPrivate).toBe(false);
    expect(cfg.metricsPort).toBe(9464);
    expect(() => chainConfigFromEnv(substituted)).not.toThrow();
  });

  it('publishes the API port the config names, and metrics only on loopback', () => {
    const api = services['gateway-api'];
    expect(api.ports).toContain(`${api.environment!.PORT}:${api.environment!.PORT}`);
    for (const g of gateway) {
      const metrics = services[g].ports!.find((p) => p.endsWith(':9464'))!;
      expect(metrics.startsWith('127.0.0.1:')).toBe(true);
    }
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

describe('Dockerfile', () => {
  const text = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  it('is multi-stage, builds the workflow bundle, ships production dependencies only and runs as non-root', () => {
    expect(text.match(/^FROM /gm)).toHaveLength(2);
    expect(text).toMatch(/scripts\/bundle-workflows\.js/);
    expect(text).toMatch(/npm prune --omit=dev/);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toMatch(/COPY --from=build \/app\/drizzle \.\/dist\/drizzle/);
  });

  it('the workflow bundle the image builds at build time builds from the workflows here', async () => {
    const { code } = await bundleWorkflowCode({ workflowsPath: workflowsEntry(), logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } });
    expect(code).toContain('depositWorkflow');
    expect(code).toContain('paymentWorkflow');
  }, 120_000);
});
