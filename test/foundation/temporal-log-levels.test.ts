import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDevServer } from '../../src/temporal/devserver';
import { installQuietRuntime } from '../../src/temporal/worker';

/**
 * The Temporal log levels an operator sets (README, Configuration): a bad value stops the process with
 * one line naming the variable and the values it takes, before anything is installed or started.
 */
const saved = { ...process.env };
afterEach(() => {
  for (const k of ['TEMPORAL_LOG_LEVEL', 'TEMPORAL_CORE_LOG_LEVEL', 'TEMPORAL_SERVER_LOG_LEVEL']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

it('refuses a core log level it does not know, naming the variable and the levels', () => {
  process.env.TEMPORAL_CORE_LOG_LEVEL = 'loud';
  expect(() => installQuietRuntime()).toThrow('TEMPORAL_CORE_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR (got "loud")');
});

it('refuses an SDK log level it does not know', () => {
  process.env.TEMPORAL_LOG_LEVEL = 'verbose';
  expect(() => installQuietRuntime()).toThrow('TEMPORAL_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR (got "verbose")');
});

it('refuses a dev server log level it does not know, before starting anything', async () => {
  process.env.TEMPORAL_SERVER_LOG_LEVEL = 'chatty';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-loglevel-'));
  try {
    await expect(startDevServer({ cliPath: '/nonexistent/temporal', host: '127.0.0.1', dataDir: dir, namespace: 'default' })).rejects.toThrow(
      'TEMPORAL_SERVER_LOG_LEVEL must be one of debug, info, warn, error (got "chatty")',
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
