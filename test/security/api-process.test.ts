import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as bip39 from 'bip39';
import { deriveAddressIn } from '../../src/chains/addresses';
import { HdSeed } from '../../src/chains/keys';
import { CALLBACK_PUBLIC_KEY, publish } from '../../src/db/queries/public-material';
import { freePort } from '../../devnet/devserver';
import { publishPublicMaterial } from '../../src/addresses/public-material';
import { createTestDatabase } from '../helpers/db';
import { waitFor } from '../helpers/process';

/**
 * The internet-facing API process holds no secret: given a seed or a signing key it refuses to start with
 * one line; running, its environment, configuration and data directory hold no private key, it hands out
 * addresses from published public material, and /api/pubkey follows a key rotation without a restart.
 */
const root = path.resolve(__dirname, '../..');
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let child: ChildProcess | undefined;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await database?.drop();
});

const baseEnv = () => ({
  PATH: process.env.PATH,
  DATABASE_URL: database.url,
  TEMPORAL_ADDRESS: '127.0.0.1:1',
  DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'gw-api-')),
  ETHEREUM_RPC_URL: 'http://127.0.0.1:1',
  ETHEREUM_CHAIN: 'regtest',
});

describe('the API process', () => {
  it.each([
    ['GATEWAY_MNEMONIC_FILE', '/run/secrets/hd_mnemonic'],
    ['SIGNING_KEY_FILE', '/run/secrets/signing_key'],
    ['SIGNING_KEY_PEM', 'not-even-parsed'],
  ])('refuses to start with %s, in one line', (name, value) => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/entry/api.ts'], { cwd: root, env: { ...baseEnv(), [name]: value }, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(`invalid configuration: the API process holds no secret; unset ${name} (the seed and the signing key belong to the worker)`);
    expect(r.stderr + r.stdout).not.toContain('not-even-parsed');
  }, 60_000);

  it('running, holds no private key, derives addresses from the published xpubs and serves the rotated public key', async () => {
    const seed = HdSeed.fromMnemonic(bip39.generateMnemonic(256));
    const key1 = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
    // The worker's part, played by the test: xpubs and the callback public key in the database.
    await publishPublicMaterial({ db: database.db, seed, chains: {}, publicKeyPem: async () => key1, poolSize: 1 });
    const port = await freePort('127.0.0.1');
    const env = { ...baseEnv(), PORT: String(port), CALLBACK_ALLOW_PRIVATE: 'true' };
    child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/api.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await waitFor(() => out.includes('API ready'), 60_000, 'API ready');
    const base = `http://127.0.0.1:${port}/api`;

    const created = await fetch(`${base}/eth/create`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callback_url: 'http://127.0.0.1:9/cb', address_out: '0x00000000000000000000000000000000000000a1' }),
    });
    expect(created.status).toBe(200);
    const { address_in: addressIn } = (await created.json()) as { address_in: string };
    expect(addressIn).toBe(deriveAddressIn(seed, 'ethereum', 'regtest', 0n));

    expect(await (await fetch(`${base}/pubkey`)).text()).toBe(key1);
    const key2 = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
    await publish(database.db, CALLBACK_PUBLIC_KEY, key2);
    expect(await (await fetch(`${base}/pubkey`)).text()).toBe(key2);

    // Its environment as the kernel holds it, and its data directory: no seed, no private key.
    const environ = fs.readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
    for (const v of environ) expect(v).not.toMatch(/^(GATEWAY_MNEMONIC|GATEWAY_MNEMONIC_FILE|SIGNING_KEY_PEM|SIGNING_KEY_FILE)=/);
    expect(environ.join('\n')).not.toMatch(/PRIVATE KEY/);
    expect(fs.readdirSync(env.DATA_DIR)).toEqual([]);
    expect(out).not.toMatch(/PRIVATE KEY|xprv/);
  }, 120_000);
});
