/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: { warnOnly: false } }],
    // ESM-only packages behind src/chains/keys.ts (SLIP-10 ed25519): compiled to CommonJS for jest.
    'node_modules/(ed25519-hd-key|@noble/ed25519)/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', esModuleInterop: true }, diagnostics: false },
    ],
  },
  transformIgnorePatterns: ['(?<!/ed25519-hd-key)/node_modules/(?!(ed25519-hd-key|@noble/ed25519)/)'],
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 120000,
  verbose: false,
};
