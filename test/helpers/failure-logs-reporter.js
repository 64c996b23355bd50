// A jest reporter: when a test file has a failing test, prints the tail of the gateway and Temporal logs that
// test file wrote (test/helpers/quiet-logs.ts); silent otherwise. Plain JS: reporters are not transformed.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const TAIL_LINES = 80;

function testLogFile(testPath) {
  const rel = path.relative(path.resolve(__dirname, '../..'), testPath).replace(/[\\/]/g, '__');
  return path.join(os.tmpdir(), `gw-test-logs-${process.getuid ? process.getuid() : 'u'}`, `${rel}.log`);
}

class FailureLogsReporter {
  onTestResult(test, result) {
    if (result.numFailingTests === 0 && !result.testExecError) return;
    const file = testLogFile(test.path);
    if (!fs.existsSync(file)) return;
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    if (lines.length === 0) return;
    const tail = lines.slice(-TAIL_LINES);
    process.stderr.write(`\nlogs of ${path.relative(process.cwd(), test.path)} (last ${tail.length} of ${lines.length} lines, all in ${file}):\n${tail.join('\n')}\n\n`);
  }
}

module.exports = FailureLogsReporter;
