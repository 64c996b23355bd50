import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { setLogSink } from '../../src/observability/logger';
import { testLogFile } from './test-logs';

/**
 * Quiet by default (jest setupFilesAfterEnv of the integration and e2e projects): the gateway's pino
 * lines (requests, watchers, workers) and the Temporal SDK's WARN and ERROR lines of this test file go to
 * a file; the failure-logs reporter prints its tail when a test of the file fails. DEBUG=1 (any value)
 * leaves everything on the terminal, with the Temporal SDK at INFO.
 */
if (!process.env.DEBUG) {
  const file = testLogFile(expect.getState().testPath ?? 'unknown');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  const write = (line: string) => {
    try {
      fs.writeSync(fd, line);
    } catch {
      // A line logged after the file was closed (a late timer of a stopped part) is dropped.
    }
  };
  setLogSink({ write });
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN', (e: LogEntry) => write(`${JSON.stringify({ temporal: e.level, msg: e.message, meta: e.meta })}\n`)),
    });
  } catch {
    // A runtime already exists in this module registry: keep it.
  }
  afterAll(() => {
    try {
      fs.closeSync(fd);
    } catch {
      // already closed
    }
  });
}
