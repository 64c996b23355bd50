/**
 * Three layers (jest projects), all run by `npm test`:
 * - unit: pure code from fixture tables; no database, network, node or child process (`npm run test:unit`);
 * - integration: real PostgreSQL, the real Temporal servers and local chain nodes, one part at a time;
 * - e2e: the whole gateway, deposit to verified callback.
 * Only integration and e2e start PostgreSQL (global setup) and route logs to a file per test file.
 */
const shared = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: { warnOnly: false } }],
    // ESM-only packages behind src/chains/keys.ts (SLIP-10 ed25519): compiled to CommonJS for jest.
    'node_modules/(ed25519-hd-key|@noble/ed25519)/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', esModuleInterop: true }, diagnostics: false },
    ],
  },
  transformIgnorePatterns: ['(?<!/ed25519-hd-key)/node_modules/(?!(ed25519-hd-key|@noble/ed25519)/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};

/** Pure tests (test/foundation/layers.test.ts checks that they import nothing that does I/O). */
const UNIT = [
  '<rootDir>/test/domain/fees.test.ts',
  '<rootDir>/test/domain/finality.test.ts',
  '<rootDir>/test/domain/callback-fields.test.ts',
  '<rootDir>/test/domain/deposit-key.test.ts',
  '<rootDir>/test/domain/network-cost.test.ts',
  '<rootDir>/test/domain/callback-host.test.ts',
  '<rootDir>/test/domain/lifecycle.test.ts',
  '<rootDir>/test/callbacks/payload.test.ts',
  '<rootDir>/test/callbacks/transport.test.ts',
  '<rootDir>/test/chains/address.test.ts',
  '<rootDir>/test/chains/address-seed.test.ts',
  '<rootDir>/test/chains/secp256k1.test.ts',
  '<rootDir>/test/chains/internal-transfers.test.ts',
  '<rootDir>/test/chains/ahead.test.ts',
  '<rootDir>/test/foundation/config.test.ts',
  '<rootDir>/test/foundation/redact.test.ts',
  '<rootDir>/test/foundation/docs.test.ts',
];

const live = {
  ...shared,
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/helpers/quiet-logs.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 120000,
  testSequencer: '<rootDir>/test/helpers/sequencer.js',
  verbose: false,
  reporters: ['default', '<rootDir>/test/helpers/failure-logs-reporter.js'],
  projects: [
    { ...shared, displayName: 'unit', roots: ['<rootDir>/test'], testMatch: UNIT },
    {
      ...live,
      displayName: 'integration',
      roots: ['<rootDir>/test'],
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/', ...UNIT.map((p) => p.replace(/\./g, '\\.'))],
    },
    { ...live, displayName: 'e2e', roots: ['<rootDir>/test/e2e'], testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
  ],
};
