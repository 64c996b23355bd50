/**
 * Jest's own order (failed first, then slowest first), except that the test files that need the production
 * Temporal server run last: on a machine that has none, npm test's pretest starts its build in the background
 * (scripts/setup-temporal-server.js --background, about 20 minutes from nothing) and the rest of the suite
 * runs meanwhile instead of waiting for it.
 */
const Sequencer = require('@jest/test-sequencer').default;

const NEEDS_TEMPORAL_SERVER = [/[\\/]test[\\/]e2e[\\/]production-topology\.test\.ts$/];

class TemporalServerLastSequencer extends Sequencer {
  async sort(tests) {
    const sorted = await super.sort(tests);
    const last = (t) => NEEDS_TEMPORAL_SERVER.some((re) => re.test(t.path));
    return [...sorted.filter((t) => !last(t)), ...sorted.filter(last)];
  }
}

module.exports = TemporalServerLastSequencer;
