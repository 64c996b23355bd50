// @ts-check
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

/** Modules that do I/O or are nondeterministic: never inside workflow code (replays must be deterministic). */
const ioModules = ['pg', 'drizzle-orm', 'drizzle-orm/*', '@electric-sql/*', 'express', 'ethers', 'bitcoinjs-lib', '@solana/*',
  '@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing', 'pino', 'prom-client', 'axios', 'undici'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.tools/**', 'data/**', 'drizzle/**', 'coverage/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: builtinModules.flatMap((m) => [m, `node:${m}`]).map((name) => ({ name, message: 'Workflow code must stay deterministic: no Node built-ins.' })),
          patterns: [
            { group: ioModules, message: 'Workflow code must not do I/O: call an activity.' },
            // Activities and the rest of src/ may only be imported as types.
            { group: ['../activities', '../activities/*', '../src/db/*', '../src/chains/*', '../src/callbacks/*', '../src/temporal/*', '../api/*'], allowTypeImports: true, message: 'Import only types from activities/ and src/ (pure code from src/domain is fine).' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' }, { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow.' }],
      'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'Workflow time comes from the SDK; Date.now is replaced but prefer workflowInfo().' }, { object: 'Math', property: 'random', message: 'Use uuid4() or the SDK-seeded Math.random deliberately, never for identifiers.' }],
    },
  },
);
