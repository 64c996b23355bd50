import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '../..');

/**
 * The lint rules that keep workflow code deterministic, and the layers (docs/architecture.md#layers), run as
 * part of `npm test`, not only `npm run lint`.
 */
describe('lint', () => {
  const eslint = new ESLint({ cwd: root });

  it('flags Node built-ins, I/O modules and floating promises in workflows/', async () => {
    const probe = [
      "import fs from 'node:fs';",
      "import { Pool } from 'pg';",
      "import { createActivities } from '../activities';",
      'async function later(): Promise<void> {}',
      'export async function bad(): Promise<void> {',
      '  later();',
      '  void fs; void Pool; void createActivities;',
      '}',
    ].join('\n');
    const [result] = await eslint.lintText(probe, { filePath: path.join(root, 'workflows/index.ts') });
    const rules = result.messages.map((m) => m.ruleId);
    expect(rules.filter((r) => r === '@typescript-eslint/no-restricted-imports')).toHaveLength(3);
    expect(rules).toContain('@typescript-eslint/no-floating-promises');
  });

  it('flags an import up the layers, a dependency cycle and SQL outside src/db/queries', async () => {
    // Each probe is a real file (the typed lint needs one the project knows) with one bad line added.
    const probes: Array<[string, string, string]> = [
      ['src/chains/factory.ts', "import { startWatchers } from '../detection/watcher';\nvoid startWatchers;", 'import-x/no-restricted-paths'],
      ['src/entry/worker.ts', "import { startDevnets } from '../../devnet';\nvoid startDevnets;", 'import-x/no-restricted-paths'],
      ['src/db/queries/derivation.ts', "import { publish } from './public-material';\nvoid publish;", 'import-x/no-cycle'],
      ['src/detection/first-start.ts', "import { sql } from 'drizzle-orm';\nvoid sql;", '@typescript-eslint/no-restricted-imports'],
    ];
    for (const [file, bad, rule] of probes) {
      const text = `${fs.readFileSync(path.join(root, file), 'utf8')}\n${bad}\n`;
      const [result] = await eslint.lintText(text, { filePath: path.join(root, file) });
      expect([file, result.messages.some((m) => m.ruleId === rule)]).toEqual([file, true]);
    }
  });

  it('the tree is clean', async () => {
    const results = await eslint.lintFiles(['.']);
    const errors = results.flatMap((r) => r.messages.filter((m) => m.severity === 2).map((m) => `${path.relative(root, r.filePath)}:${m.line} ${m.ruleId} ${m.message}`));
    expect(errors).toEqual([]);
  });
});
