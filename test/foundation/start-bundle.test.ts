import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { generateMnemonic } from 'bip39';
import { xpubDeriver } from '../../src/addresses/derived-addresses';
import type { DeriveReply, DeriveRequest } from '../../src/addresses/derive-thread';
import { exportPublicKeys } from '../../src/addresses/watch-only';
import { HdSeed } from '../../src/chains/keys';

/**
 * What `npm start` runs: scripts/build.js bundles the gateway and its threads into dist/bundle/ (start.test.ts
 * starts the whole). Here what a start does not show: the files the modules reach from their own folder, and the
 * derivation thread, whose loss the API survives by deriving on its own thread.
 */
const root = path.resolve(__dirname, '../..');
const bundle = (rel: string) => path.join(root, 'dist/bundle', rel);

beforeAll(() => {
  execFileSync(process.execPath, ['scripts/build.js'], { cwd: root, stdio: 'pipe' });
}, 120_000);

it('the bundles stand where the paths of their modules lead to the compiled layout, the threads to their bundles', () => {
  const from = path.dirname(bundle('gateway/main.js'));
  // src/db/client.ts, src/temporal/worker.ts, src/runtime/api-thread.ts, src/addresses/derive-thread.ts, src/chains/sol/block-thread.ts
  for (const rel of ['../../drizzle/meta/_journal.json', '../../workflow-bundle.js', '../../workflows/index.js', '../entry/api-thread.js', '../entry/derive-thread.js', '../../entry/sol-block-thread.js']) {
    expect(fs.existsSync(path.resolve(from, rel)) ? rel : `${rel} missing`).toBe(rel);
  }
  // The gateway's own modules are in the bundle: nothing of dist/src is loaded beside it.
  const text = fs.readFileSync(bundle('gateway/main.js'), 'utf8');
  expect(text.match(/require\("\.\.?\/[^"]*"\)/g) ?? []).toEqual([]);
  // The API thread's statements run on the main thread's PGlite: the thread loads none of PGlite's JavaScript.
  expect(fs.readFileSync(bundle('entry/api-thread.js'), 'utf8')).not.toContain('require("@electric-sql/pglite")');
});

it("the derivation thread's bundle derives what the compiled code derives", async () => {
  const keys = exportPublicKeys(HdSeed.fromMnemonic(generateMnemonic(256)));
  const worker = new Worker(bundle('entry/derive-thread.js'));
  try {
    const reply = await new Promise<DeriveReply>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.postMessage({ id: 1, xpub: keys.xpubs.ethereum, networkId: 'ethereum', mode: 'mainnet', start: '5', count: 3 } satisfies DeriveRequest);
    });
    const inline = xpubDeriver(keys, 'ethereum', 'mainnet');
    expect(reply).toEqual({ id: 1, addresses: [5n, 6n, 7n].map(inline) });
  } finally {
    await worker.terminate();
  }
});
