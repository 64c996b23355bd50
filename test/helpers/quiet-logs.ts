import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { setLogSink } from '../../src/observability/logger';
import { testLogFile, testLogSink } from './test-logs';

/**
 * Quiet by default (jest setupFilesAfterEnv of the integration and e2e projects): the gateway's pino
 * lines (requests, watchers, workers) and the Temporal SDK's WARN and ERROR lines of this test file go to
 * a file; the failure-logs reporter prints its tail when a test of the file fails. DEBUG=1 (any value)
 * leaves everything on the terminal, with the Temporal SDK at INFO.
 */
if (!process.env.DEBUG) {
  const file = testLogFile(expect.getState().testPath ?? 'unknown');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sink = testLogSink(file);
  const write = sink.write;
  setLogSink({ write });
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN', (e: LogEntry) => write(`${JSON.stringify({ temporal: e.level, msg: e.message, meta: e.meta })}\n`)),
    });
  } catch {
    // A runtime already exists in this module registry: keep it.
  }
  afterAll(() => sink.close());
}
