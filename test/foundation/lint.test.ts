import path from 'node:path';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '../..');

/** The lint rules that keep workflow code deterministic run as part of `npm test`, not only `npm run lint`. */
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

  it('the tree is clean', async () => {
    const results = await eslint.lintFiles(['.']);
    const errors = results.flatMap((r) => r.messages.filter((m) => m.severity === 2).map((m) => `${path.relative(root, r.filePath)}:${m.line} ${m.ruleId} ${m.message}`));
    expect(errors).toEqual([]);
  });
});
