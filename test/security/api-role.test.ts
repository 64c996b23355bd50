import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as bip39 from 'bip39';
import { Client } from 'pg';
import { chainConfigFromEnv } from '../../src/chains/config';
import { HdSeed } from '../../src/chains/keys';
import { merchantAddress } from '../api/helpers';
import { freePort } from '../../devnet/devserver';
import { publishPublicMaterial } from '../../src/addresses/public-material';
import { createTestDatabase } from '../helpers/db';
import { findPgBin } from '../helpers/pg-server';
import { waitFor } from '../helpers/process';

/**
 * The API's database role (drizzle/0000_init.sql, DESIGN 14) on a real PostgreSQL server: the API
 * process runs under it (no migration of its own) and answers its real requests, creates of a derived
 * and of a pooled (Solana) address included; the role itself is refused every write the API does not
 * need: a payout, a payment, a forward, a delivery attempt, and reading the signed forwards.
 */
const root = path.resolve(__dirname, '../..');
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let admin: Client;
let asApi: Client;
let child: ChildProcess | undefined;
let roleUrl: string;

beforeAll(async () => {
  database = await createTestDatabase();
  admin = new Client({ connectionString: database.url });
  await admin.connect();
  const u = new URL(database.url);
  // The operator's step as docker-compose.yml runs it: ops/postgres/api-role.sh gives the role the migration
  // made a login (the throw-away cluster trusts local logins, so the password itself is not checked here).
  const psqlDir = path.dirname(findPgBin('psql')!);
  const pgEnv = { PATH: `${psqlDir}:${process.env.PATH}`, PGHOST: u.hostname, PGPORT: u.port, PGUSER: decodeURIComponent(u.username), PGDATABASE: u.pathname.slice(1) };
  const setup = spawnSync('/bin/sh', [path.join(root, 'ops/postgres/api-role.sh')], { env: { ...pgEnv, API_DATABASE_PASSWORD: 'apiSecret1' }, encoding: 'utf8' });
  expect([setup.status, setup.stdout.trim(), setup.stderr]).toEqual([0, 'gateway_api may log in', '']);
  const { rows } = await admin.query<{ rolcanlogin: boolean; rolpassword: string }>("SELECT rolcanlogin, rolpassword FROM pg_authid WHERE rolname = 'gateway_api'");
  expect(rows[0].rolcanlogin).toBe(true);
  expect(rows[0].rolpassword).toMatch(/^SCRAM-SHA-256\$/);
  u.username = 'gateway_api';
  u.password = '';
  roleUrl = u.toString();
  asApi = new Client({ connectionString: roleUrl });
  await asApi.connect();
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await asApi?.end();
  await admin?.end();
  await database?.drop();
});

/** The SQLSTATE of a statement run as the API's role; null when it ran. */
async function refusal(statement: string): Promise<string | null> {
  try {
    await asApi.query(statement);
    return null;
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

describe('the API database role', () => {
  it('serves the API: creates (derived and pooled), reuse, info, catalog, logs, QR code, pubkey', async () => {
    const seed = HdSeed.fromMnemonic(bip39.generateMnemonic(256));
    const chainEnv = { ETHEREUM_RPC_URL: 'http://127.0.0.1:1', ETHEREUM_CHAIN: 'regtest', SOLANA_RPC_URL: 'http://127.0.0.1:1', SOLANA_CHAIN: 'regtest' };
    const pem = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
    // The worker's part, under the owner: xpubs, the callback key, a Solana pool.
    await publishPublicMaterial({ db: database.db, seed, chains: chainConfigFromEnv(chainEnv), publicKeyPem: async () => pem, poolSize: 3 });
    const port = await freePort('127.0.0.1');
    const env = {
      PATH: process.env.PATH, DATABASE_URL: roleUrl, TEMPORAL_ADDRESS: '127.0.0.1:1', DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'gw-api-role-')),
      PORT: String(port), CALLBACK_ALLOW_PRIVATE: 'true', ...chainEnv,
    };
    child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/api.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await waitFor(() => out.includes('API ready') || child!.exitCode !== null, 60_000, 'API ready');
    expect(out).toContain('migrations are left to the worker');
    const base = `http://127.0.0.1:${port}/api`;
    const create = (ticker: string, body: Record<string, unknown>) =>
      fetch(`${base}/${ticker}/create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const ethOut = '0x00000000000000000000000000000000000000a1';
    const solOut = merchantAddress('solana', 'regtest');
    const eth = await create('eth', { callback_url: 'http://127.0.0.1:9/cb?order=1', address_out: ethOut, post: 1, json: 1 });
    const ethBody = (await eth.json()) as { address_in: string };
    const again = await create('eth', { callback_url: 'http://127.0.0.1:9/cb?order=1', address_out: ethOut, post: 1, json: 1 });
    const sol = await create('sol', { callback_url: 'http://127.0.0.1:9/cb?order=2', address_out: solOut });
    const statuses = {
      eth: eth.status,
      again: [again.status, ((await again.json()) as { address_in: string }).address_in === ethBody.address_in],
      sol: [sol.status, await sol.text()],
      info: (await fetch(`${base}/eth/info`)).status,
      catalog: (await fetch(`${base}/cryptocurrencies`)).status,
      logs: (await fetch(`${base}/eth/logs?callback=${encodeURIComponent('http://127.0.0.1:9/cb?order=1')}`)).status,
      qrcode: (await fetch(`${base}/eth/qrcode?address=${ethBody.address_in}&value=0.1`)).status,
      pubkey: await (await fetch(`${base}/pubkey`)).text(),
      health: (await fetch(`${base}/health`)).status,
    };
    expect(statuses).toEqual({
      eth: 200, again: [200, true], sol: [200, expect.stringContaining('"address_in"')], info: 200, catalog: 200, logs: 200, qrcode: 200, pubkey: pem, health: 200,
    });
    expect(out).not.toMatch(/permission denied/);
  }, 120_000);

  it.each([
    ['a payout', 'UPDATE payment_configs SET address_out = address_in'],
    ['a configuration, deleted', 'DELETE FROM payment_configs'],
    ['a payment', "UPDATE payments SET result = 'sent'"],
    ['a payment, inserted', 'INSERT INTO payments SELECT * FROM payments LIMIT 0'],
    ['a forward', 'UPDATE forward_txs SET txid = txid'],
    ['a forward, read (signed bytes)', 'SELECT * FROM forward_txs'],
    ['a delivery attempt', 'DELETE FROM delivery_attempts'],
    ['a published key', "UPDATE public_material SET value = 'x'"],
    ['a derived address, rewritten', "UPDATE derived_addresses SET address = 'x'"],
    ['a pool address, rewritten', "UPDATE address_pool SET address = 'x'"],
    ['a minimum', 'DELETE FROM asset_minimums'],
    ['the schema', 'CREATE TABLE api_was_here (a int)'],
  ])('is refused %s', async (_what, statement) => {
    expect(await refusal(statement)).toBe('42501');
  });

  it('leaves the stored payout as it was', async () => {
    await refusal('UPDATE payment_configs SET address_out = address_in');
    const { rows } = await admin.query<{ address_out: string }>('SELECT address_out FROM payment_configs ORDER BY created_at');
    expect(rows.map((r) => r.address_out)).toEqual(['0x00000000000000000000000000000000000000a1', merchantAddress('solana', 'regtest')]);
  });
});
