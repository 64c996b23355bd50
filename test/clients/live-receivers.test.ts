import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deliver, MERCHANT_PATH, newKeyPem, newSigner, PLAN } from './helpers/capture';
import { startKeyServer } from './helpers/key-server';
import { freePort, GO_BUILD_TIMEOUT_MS, goBuild, requireRuntime, startChild, type Child } from './helpers/runtimes';

/**
 * The README snippets as real receivers: PHP under `php -S`, Python on the standard WSGI server, Go on
 * net/http. The gateway's delivery code calls each one over HTTP on 127.0.0.1 for every transport and
 * event; each verifies with the key it fetched from the real GET /api/pubkey route, checks address_in and
 * coin against the order its callback URL names, and answers exactly 200. A callback signed by another key
 * gets 401, after one refetch of the key. So does a squat or an alias: the gateway's genuine signature on
 * the shop's own callback URL (or a spelling of it that arrives the same), from a configuration with
 * another address_in, whose payment went to another payout.
 */

const ROOT = path.resolve(__dirname, '../..');
const RUNNERS = path.join(__dirname, 'runners');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-live-'));
const gatewayKey = newKeyPem();
const signer = newSigner(gatewayKey);
let keyServer: Awaited<ReturnType<typeof startKeyServer>>;

beforeAll(async () => {
  keyServer = await startKeyServer({ right: (await signer.publicKeyPem())!, wrong: (await newSigner().publicKeyPem())! });
});
afterAll(async () => {
  await keyServer?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The shop's orders, one per coin of the plan, as their create responses gave them. */
const REFERENCE: Record<string, string> = { btc: 'B-17', sol_usdc: 'S-17', eth: 'E-17' };
const ORDERS = JSON.stringify(Object.fromEntries(PLAN.map(({ snapshot: s }) => [REFERENCE[s.coin], { address_in: s.address_in, coin: s.coin }])));
const pathOf = (step: (typeof PLAN)[number]) => MERCHANT_PATH.replace('order=A-17', `order=${REFERENCE[step.snapshot.coin]}`);

/** The attacker's configuration for the shop's callback URL: its own address_in, its own payout. */
const SPELLINGS: Array<[string, (origin: string, target: string) => string]> = [
  ['squat: the same URL', (o, t) => `${o}${t}`],
  ['alias: a fragment', (o, t) => `${o}${t}#order`],
  ['alias: a /./ segment', (o, t) => `${o}${t.replace('/shop/', '/shop/./')}`],
  ['alias: a trailing &', (o, t) => `${o}${t}&`],
  ['alias: the scheme in upper case', (o, t) => `${o.replace('http:', 'HTTP:')}${t}`],
];

/** Every transport and event delivered (200, fields parsed after verification); a forged one refused. */
async function expectReceiver(lang: string, child: Child) {
  try {
    const origin = `http://127.0.0.1:${child.port}`;
    const outcomes = [];
    for (const step of PLAN) outcomes.push(await deliver(signer, `${origin}${pathOf(step)}`, step));
    expect(outcomes.map((o) => [o.outcome, o.status, o.body])).toEqual(
      PLAN.map((s) => ['delivered', 200, `ok ${s.snapshot.uuid} ${s.event === 'pending' ? 'pending 1' : 'sent 0'} ${s.snapshot.coin} ${REFERENCE[s.snapshot.coin]}`]),
    );
    const squats = [];
    for (const [spelling, url] of SPELLINGS) {
      for (const step of PLAN.filter((s) => s.event === 'confirmed')) {
        const attacker = { ...step.snapshot, uuid: crypto.randomUUID(), address_in: `${step.snapshot.address_in}Attacker`, address_out: 'attacker-payout' };
        const o = await deliver(signer, url(origin, pathOf(step)), { ...step, snapshot: attacker });
        squats.push([spelling, step.transport, o.outcome, o.status, o.body?.trim()]);
      }
    }
    expect(squats).toEqual(SPELLINGS.flatMap(([spelling]) => ['get', 'form', 'json'].map((t) => [spelling, t, 'failed', 401, 'wrong-address-in'])));
    const forged = await deliver(newSigner(), `${origin}${pathOf(PLAN[5])}`, PLAN[5]);
    expect([forged.outcome, forged.status, forged.body]).toEqual(['failed', 401, expect.stringContaining('bad-signature')]);
    // One fetch on first use, one refetch for the forged callback; none for the genuine ones after the first.
    expect(keyServer.fetchesOf('right', `${lang}-live`)).toBe(2);
  } finally {
    await child.stop();
  }
}

it('PHP: the plain-PHP snippet under php -S', async () => {
  const php = requireRuntime('php');
  const port = await freePort();
  const env = { CLIENT_DIR: path.join(ROOT, 'clients/php'), GATEWAY_URL: keyServer.gatewayUrl('right', 'php-live'), KEY_FILE: path.join(dir, 'php-key.pem'), ORDERS };
  await expectReceiver('php', await startChild(php, ['-S', `127.0.0.1:${port}`, path.join(RUNNERS, 'receiver.php')], { env, port }));
});

it('Python: the WSGI verifier (as in the Flask snippet) on wsgiref', async () => {
  const python = requireRuntime('python');
  const args = [path.join(RUNNERS, 'wsgi_receiver.py'), path.join(ROOT, 'clients/python'), keyServer.gatewayUrl('right', 'py-live'), ORDERS];
  await expectReceiver('py', await startChild(python, args));
});

it('Go: the net/http snippet', async () => {
  const go = requireRuntime('go');
  const bin = path.join(dir, 'go-receiver');
  // Built first and run directly, so that stopping the receiver stops the server itself.
  await goBuild(go, path.join(RUNNERS, 'go-receiver'), bin);
  await expectReceiver('go', await startChild(bin, [keyServer.gatewayUrl('right', 'go-live'), ORDERS]));
}, GO_BUILD_TIMEOUT_MS + 60_000);
