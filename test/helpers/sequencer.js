/**
 * Jest's own order (failed first, then slowest first), with two exceptions:
 * - the longest files start first, in this order, whatever jest knows: a fresh clone has no timings (jest then
 *   orders by file size), and with several workers a long file started late is the run's tail;
 * - the test files that need the production Temporal server run last while it is missing: on a machine that
 *   has none, npm test's pretest starts its build in the background (scripts/setup-temporal-server.js
 *   --background, about 20 minutes from nothing) and the rest of the suite runs meanwhile instead of waiting
 *   for it. Once installed (a kept machine copies it from its cache at once), they are long files like the rest.
 */
const fs = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const BIN = path.resolve(__dirname, '../../.tools/temporal-server/bin');
const temporalServerInstalled = () =>
  [process.env.TEMPORAL_SERVER_PATH || path.join(BIN, 'temporal-server'), process.env.TEMPORAL_SQL_TOOL_PATH || path.join(BIN, 'temporal-sql-tool')].every((p) => fs.existsSync(p));

const NEEDS_TEMPORAL_SERVER = [/[\\/]test[\\/]e2e[\\/]production-topology\.test\.ts$/];

const LONGEST_FIRST = [
  'e2e/drill',
  'e2e/account-minimum-deposits',
  'e2e/lifecycle',
  'e2e/production-topology',
  'e2e/evidence',
  'e2e/db-restart',
  'e2e/crash-restart',
  'security/secret-leaks',
  'foundation/lint',
  'workflows/payment',
  'e2e/utxo-minimum-deposits',
  'e2e/minimums',
  'e2e/processes',
  'minimums/faults',
  'chains/devnet',
  'security/watch-only',
  'ops/image',
].map((f) => new RegExp(`[\\\\/]test[\\\\/]${f.replace('/', '[\\\\/]')}\\.test\\.ts$`));

class LongestFirstSequencer extends Sequencer {
  async sort(tests) {
    const sorted = await super.sort(tests);
    const waitsForServer = !temporalServerInstalled();
    const last = (t) => waitsForServer && NEEDS_TEMPORAL_SERVER.some((re) => re.test(t.path));
    const rank = (t) => (last(t) ? -1 : LONGEST_FIRST.findIndex((re) => re.test(t.path)));
    const first = LONGEST_FIRST.flatMap((_, i) => sorted.filter((t) => rank(t) === i));
    return [...first, ...sorted.filter((t) => rank(t) < 0 && !last(t)), ...sorted.filter(last)];
  }
}

module.exports = LongestFirstSequencer;
