import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The log file of one test file (see quiet-logs.ts), keyed by its path under the project. */
export function testLogFile(testPath: string): string {
  const rel = path.relative(path.resolve(__dirname, '../..'), testPath).replace(/[\\/]/g, '__');
  return path.join(os.tmpdir(), `gw-test-logs-${process.getuid?.() ?? 'u'}`, `${rel}.log`);
}

/**
 * A test file's log sink. Lines may still come after the file is closed (a late timer of a stopped part,
 * or the process-wide Temporal runtime installed by an earlier file of the same jest worker); they are
 * dropped. They must never reach the closed descriptor's number: the worker's next file reuses it for a
 * socket (a PostgreSQL connection that then reads a log line as a protocol message).
 */
export function testLogSink(file: string): { write: (line: string) => void; close: () => void } {
  const fd = fs.openSync(file, 'w');
  let open = true;
  return {
    write(line) {
      if (!open) return;
      try {
        fs.writeSync(fd, line);
      } catch {
        // A full disk or the like: a log line is not worth a failed test.
      }
    },
    close() {
      if (!open) return;
      open = false;
      fs.closeSync(fd);
    },
  };
}
