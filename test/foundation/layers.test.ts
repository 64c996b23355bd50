import fs from 'node:fs';
import path from 'node:path';

/**
 * The unit layer stays pure, so that `npm run test:unit` needs nothing installed and takes seconds: its
 * test files (and the test helpers they import) touch no database, network, chain node, Temporal or child
 * process, and every test file belongs to exactly one layer.
 */
const root = path.resolve(__dirname, '../..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require(path.join(root, 'jest.config.js')) as { projects: Array<{ displayName: string; testMatch: string[] }> };
const unit = config.projects.find((p) => p.displayName === 'unit')!.testMatch.map((p) => p.replace('<rootDir>/', ''));

const FORBIDDEN = [
  /from 'pg'/, /from 'node:(http|https|net|child_process|dgram)'/, /@temporalio\/(worker|testing|client)/, /helpers\/(db|nodes|temporal|process)'/,
  /(^|\/)devnet\//, /runtime\//, /addresses\/(public-material|derive)/, /from 'ethers'/, /\/(rpc|adapter)'/, /from 'undici'/, /fetch\(/,
];

function imports(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const text = fs.readFileSync(file, 'utf8');
  const out = [text];
  for (const m of text.matchAll(/from '(\.[^']+)'/g)) {
    const target = path.resolve(path.dirname(file), m[1]);
    // Local test fixtures and helpers are followed; src/ is checked by what the test names directly.
    if (target.startsWith(path.join(root, 'test')) && fs.existsSync(`${target}.ts`)) out.push(...imports(`${target}.ts`, seen));
  }
  return out;
}

it.each(unit)('%s imports nothing that does I/O', (rel) => {
  const texts = imports(path.join(root, rel));
  for (const re of FORBIDDEN) expect([rel, texts.some((t) => re.test(t))]).toEqual([rel, false]);
});

it('every test file is in exactly one layer, and e2e is test/e2e', () => {
  const all: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.test.ts')) all.push(path.relative(root, p));
    }
  };
  walk(path.join(root, 'test'));
  for (const u of unit) expect(all).toContain(u);
  expect(unit.filter((u) => u.startsWith('test/e2e/'))).toEqual([]);
  expect(all.length).toBeGreaterThan(unit.length);
});
