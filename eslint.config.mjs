// @ts-check
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

/** Modules that do I/O or are nondeterministic: never inside workflow code (replays must be deterministic). */
const ioModules = ['pg', 'drizzle-orm', 'drizzle-orm/*', '@electric-sql/*', 'express', 'ethers', 'bitcoinjs-lib', '@solana/*',
  '@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing', 'pino', 'prom-client', 'axios', 'undici'];

/**
 * The layers of the gateway's code (docs/architecture.md#layers): each names the layers it may import from;
 * every other project folder is out of its reach (import-x/no-restricted-paths, on resolved paths).
 */
const LAYERS = {
  domain: { paths: ['src/domain', 'src/project-root.ts'], uses: [] },
  client: { paths: ['clients'], uses: [] },
  support: { paths: ['src/config.ts', 'src/threads.ts', 'src/observability', 'src/prices', 'src/callbacks'], uses: ['domain', 'client'] },
  storage: { paths: ['src/db'], uses: ['domain', 'client', 'support'] },
  chains: { paths: ['src/chains'], uses: ['domain', 'support'] },
  addresses: { paths: ['src/addresses'], uses: ['domain', 'client', 'support', 'storage', 'chains'] },
  detection: { paths: ['src/detection'], uses: ['domain', 'support', 'storage', 'chains'] },
  sweep: { paths: ['src/sweep'], uses: ['domain', 'support', 'storage', 'chains'] },
  activities: { paths: ['activities'], uses: ['domain', 'client', 'support', 'storage', 'chains', 'detection', 'sweep'] },
  // Types only from below the domain (the rule for workflows/ further down).
  workflows: { paths: ['workflows'], uses: ['domain', 'support', 'sweep', 'activities'] },
  api: { paths: ['api'], uses: ['domain', 'client', 'support', 'storage', 'chains', 'addresses'] },
  wiring: { paths: ['src/temporal', 'src/runtime', 'src/entry'], uses: ['domain', 'client', 'support', 'storage', 'chains', 'addresses', 'detection', 'sweep', 'activities', 'workflows', 'api'] },
  devnet: { paths: ['devnet'], uses: ['domain', 'support', 'storage', 'chains'] },
  embedded: { paths: ['src/main.ts'], uses: ['domain', 'client', 'support', 'storage', 'chains', 'addresses', 'detection', 'sweep', 'activities', 'workflows', 'api', 'wiring', 'devnet'] },
};
const layerZones = Object.entries(LAYERS).map(([name, { paths, uses }]) => ({
  target: paths.map((p) => `./${p}`),
  from: Object.entries(LAYERS).filter(([other]) => other !== name && !uses.includes(other)).flatMap(([, l]) => l.paths.map((p) => `./${p}`)),
  message: `The ${name} layer imports only from ${uses.length ? uses.join(', ') : 'itself'} (docs/architecture.md#layers).`,
})).filter((z) => z.from.length > 0);
const layered = Object.values(LAYERS).flatMap((l) => l.paths.map((p) => (p.endsWith('.ts') ? p : `${p}/**/*.ts`)));

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
    files: layered,
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.cjs', '.json'] })],
      'import-x/extensions': ['.ts'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // SQL lives in src/db/queries: elsewhere the query builder and the tables are out of reach (types are fine).
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ group: ['drizzle-orm', 'drizzle-orm/*', '**/db/schema'], allowTypeImports: true, message: 'Queries live in src/db/queries.' }],
      }],
    },
  },
  {
    // SQL that has not moved into src/db/queries yet (issue 58 item 4).
    files: ['src/db/**/*.ts', 'activities/index.ts', 'activities/minimums.ts', 'activities/delivery.ts', 'api/assets.ts', 'api/routes/qrcode.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': 'off' },
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
