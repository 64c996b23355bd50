import os from 'node:os';
import path from 'node:path';

/** The log file of one test file (see quiet-logs.ts), keyed by its path under the project. */
export function testLogFile(testPath: string): string {
  const rel = path.relative(path.resolve(__dirname, '../..'), testPath).replace(/[\\/]/g, '__');
  return path.join(os.tmpdir(), `gw-test-logs-${process.getuid?.() ?? 'u'}`, `${rel}.log`);
}
