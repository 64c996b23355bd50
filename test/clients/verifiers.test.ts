import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { verifyCallback as projectVerify } from '../../src/callbacks/verify';
import { CallbackVerifier, verifyCallback as clientVerify, verifyPaymentCallback } from '../../clients/typescript/verify';
import { captureCallbacks, newKeyPem, publicOf, type Captured } from './helpers/capture';
import { refetchCases, signatureCases, writeCases, type FixtureCase } from './helpers/fixtures';
import { startKeyServer } from './helpers/key-server';
import { GO_BUILD_TIMEOUT_MS, goBuild, requireRuntime, run } from './helpers/runtimes';

/**
 * The merchant kit's verifiers (clients/) against real callbacks: captured from the gateway's own signer and
 * delivery code on 127.0.0.1 for every transport, written as fixtures, run through Python, PHP, Go and the
 * standalone TypeScript copy. Every genuine callback verifies; every tampered one fails for the right reason.
 */

const ROOT = path.resolve(__dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-clients-'));
let captured: Captured[];
let keys: { right: string; wrong: string };
let signature: FixtureCase[];
let keyServer: Awaited<ReturnType<typeof startKeyServer>>;

beforeAll(async () => {
  const got = await captureCallbacks();
  captured = got.captured;
  const wrongPem = publicOf(newKeyPem());
  keys = { right: path.join(dir, 'gateway.pub.pem'), wrong: path.join(dir, 'other.pub.pem') };
  fs.writeFileSync(keys.right, got.publicPem);
  fs.writeFileSync(keys.wrong, wrongPem);
  signature = signatureCases(captured, keys);
  keyServer = await startKeyServer({ right: got.publicPem, wrong: wrongPem });
});
afterAll(async () => {
  await keyServer?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

type Outcome = { name: string; ok: boolean; reason: string | null };

function casesFor(lang: string): FixtureCase[] {
  const json = signature.find((c) => c.name === 'json/confirmed: as delivered')!;
  const get = signature.find((c) => c.name === 'get/pending: as delivered')!;
  return [
    ...signature,
    ...refetchCases(json, `${lang}-json`, keys, keyServer.gatewayUrl),
    ...refetchCases(get, `${lang}-get`, keys, keyServer.gatewayUrl).map((c) => ({ ...c, name: `${c.name} (GET)` })),
  ];
}

/** Every case reached its verdict, and each verifier fetched the key exactly as often as the rule allows. */
function expectVerdicts(cases: FixtureCase[], outcomes: Outcome[]) {
  expect(outcomes.map((o) => o.name)).toEqual(cases.map((c) => c.name));
  const got = outcomes.map((o) => ({ name: o.name, ok: o.ok, reason: o.reason ?? null }));
  expect(got).toEqual(cases.map((c) => ({ name: c.name, ...c.expect })));
  for (const c of cases) {
    if (c.fetches) expect([c.name, keyServer.fetchesOf(c.fetches.served, c.fetches.id)]).toEqual([c.name, c.fetches.count]);
  }
}

it('captures a real callback of every transport and event, GET with the merchant query first', () => {
  expect(captured.map((c) => `${c.transport}/${c.event} ${c.request.method}`)).toEqual([
    'get/pending GET', 'get/confirmed GET', 'form/pending POST', 'form/confirmed POST', 'json/pending POST', 'json/confirmed POST',
  ]);
  expect(captured[0].request.url.startsWith('/shop/cb%20hook?order=A-17&z=1&a=%41&note=caf%C3%A9&uuid=')).toBe(true);
  expect(captured[2].request.headers['content-type']).toBe('application/x-www-form-urlencoded');
  expect(captured[4].request.headers['content-type']).toBe('application/json');
  const verdicts = new Set(signature.map((c) => String(c.expect.reason)));
  expect([...verdicts].sort()).toEqual(['bad-signature', 'bad-timestamp', 'missing-header', 'null', 'stale-timestamp', 'wrong-address-in', 'wrong-coin']);
});

it('TypeScript (clients/typescript, standalone; the project verifies with this same code) gets every case right', async () => {
  expect(projectVerify).toBe(clientVerify);
  const cases = casesFor('ts');
  const outcomes: Outcome[] = [];
  for (const c of cases) {
    const request = { method: c.method, url: c.target, headers: c.headers, rawBody: Buffer.from(c.body_b64, 'base64') };
    const pem = c.key_file ? fs.readFileSync(c.key_file, 'utf8') : undefined;
    const expected = { addressIn: c.expected.address_in, coin: c.expected.coin };
    const r = c.gateway
      ? await new CallbackVerifier({ gatewayUrl: c.gateway, publicKeyPem: pem }).verifyPayment(request, expected, c.now * 1000)
      : verifyPaymentCallback(request, pem!, expected, c.now * 1000);
    outcomes.push({ name: c.name, ok: r.ok, reason: r.ok ? null : r.reason });
  }
  expectVerdicts(cases, outcomes);
});

it('the TypeScript client imports nothing but Node built-ins', () => {
  const source = fs.readFileSync(path.join(ROOT, 'clients/typescript/verify.ts'), 'utf8');
  const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
  expect(imports).toEqual(['node:crypto']);
});

it('Python (clients/python, cryptography) reaches every verdict', async () => {
  const python = requireRuntime('python');
  const cases = casesFor('py');
  const out = await run(python, [path.join(__dirname, 'runners/verify_fixtures.py'), writeCases(dir, 'py', cases), path.join(ROOT, 'clients/python')]);
  expectVerdicts(cases, JSON.parse(out) as Outcome[]);
});

it('PHP (clients/php, openssl) reaches every verdict', async () => {
  const php = requireRuntime('php');
  const cases = casesFor('php');
  const out = await run(php, [path.join(__dirname, 'runners/verify_fixtures.php'), writeCases(dir, 'php', cases), path.join(ROOT, 'clients/php')]);
  expectVerdicts(cases, JSON.parse(out) as Outcome[]);
});

it('Go (clients/go, standard library) reaches every verdict through a net/http request', async () => {
  const go = requireRuntime('go');
  const cases = casesFor('go');
  const bin = path.join(dir, 'go-fixtures');
  await goBuild(go, path.join(__dirname, 'runners/go'), bin);
  const out = await run(bin, [writeCases(dir, 'go', cases)]);
  expectVerdicts(cases, JSON.parse(out) as Outcome[]);
}, GO_BUILD_TIMEOUT_MS + 60_000);

it('a missing runtime fails with the line that installs it, never a skip', () => {
  // A PATH with a folder that holds no php.
  expect(() => requireRuntime('php', { ...process.env, PATH: dir })).toThrow('apt-get update && apt-get install -y php-cli');
});
