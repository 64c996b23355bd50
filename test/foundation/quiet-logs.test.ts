import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testLogSink } from '../helpers/test-logs';

/**
 * Quiet by default: a test file's gateway logs go to its log file, printed (tail) only when one of its
 * tests fails; DEBUG shows them live. Checked on a fixture test run by a child jest with this project's
 * setup file and reporter.
 */
const root = path.resolve(__dirname, '../..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const main = require(path.join(root, 'jest.config.js')) as { projects: Array<Record<string, unknown> & { displayName: string }>; reporters: unknown[] };
const integration = main.projects.find((p) => p.displayName === 'integration')!;
const config = {
  rootDir: root,
  testEnvironment: 'node',
  transform: integration.transform,
  transformIgnorePatterns: integration.transformIgnorePatterns,
  moduleFileExtensions: integration.moduleFileExtensions,
  setupFilesAfterEnv: integration.setupFilesAfterEnv,
  reporters: main.reporters,
  testMatch: ['<rootDir>/test/fixtures/quiet/logging.fixture.ts'],
};

function runFixture(extra: NodeJS.ProcessEnv) {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  if (!extra.DEBUG) delete env.DEBUG;
  delete env.LOG_LEVEL;
  const r = spawnSync(process.execPath, [path.join(root, 'node_modules/jest/bin/jest.js'), '--runInBand', '--ci', '--config', JSON.stringify(config)], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

it('a passing test prints no gateway log line', () => {
  const r = runFixture({});
  expect(r.status).toBe(0);
  expect(r.out).toContain('1 passed');
  expect(r.out).not.toMatch(/QL-7Q|QL-8W/);
});

it('a failing test prints the logs of its file after the failure', () => {
  const r = runFixture({ QUIET_FIXTURE_FAIL: '1' });
  expect(r.status).toBe(1);
  expect(r.out).toContain('failed on purpose');
  expect(r.out).toMatch(/logs of test\/fixtures\/quiet\/logging\.fixture\.ts/);
  expect(r.out).toContain('QL-7Q');
  expect(r.out).toContain('QL-8W');
});

it('DEBUG shows the logs live', () => {
  const r = runFixture({ DEBUG: '1' });
  expect(r.status).toBe(0);
  expect(r.out).toContain('QL-7Q');
});

it('a line logged after its file was closed reaches no descriptor that reused its number', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quiet-logs-'));
  try {
    const earlier = testLogSink(path.join(dir, 'earlier.log'));
    earlier.close();
    // The next file opened takes the lowest free number: the one just closed (a socket, in a jest worker).
    const next = path.join(dir, 'next.log');
    const fd = fs.openSync(next, 'w');
    earlier.write('{"late":"line"}\n');
    fs.closeSync(fd);
    expect(fs.readFileSync(next, 'utf8')).toBe('');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
