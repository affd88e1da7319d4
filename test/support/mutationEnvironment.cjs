// Loaded only by mutation runs (stryker.config.json, jest.config.testEnvironment); plain CommonJS
// because jest loads its environments without the TypeScript transform.
//
// A mutant is killed as soon as one of its tests fails, whatever the others do, and
// Stryker's jest runner cannot bail (jest has no programmatic bail). So once a test has failed
// under the active mutant, every later test of that mutant run is skipped: the outcome (killed, by
// the test that failed) is the same, and a killed mutant no longer runs the rest of the decider's
// tests, property tests included. A surviving mutant runs every test it reaches, as before. The
// environment object lives in the test runner's own process, so `process.env` here is the real
// one and carries the mark from one test file to the next; mutationSequencer.cjs clears it when a
// mutant run starts (a mutant may be run again in the same process).
const { TestEnvironment } = require('jest-environment-node');

const killedMark = 'ATC_MUTATION_KILLED';

class MutationEnvironment extends TestEnvironment {
  async handleTestEvent(event) {
    const active = process.env.__STRYKER_ACTIVE_MUTANT__;
    if (active === undefined) return;
    if (event.name === 'test_done' && event.test.errors.length > 0) process.env[killedMark] = active;
    else if (event.name === 'test_start' && process.env[killedMark] === active) event.test.mode = 'skip';
  }
}

module.exports = MutationEnvironment;
module.exports.killedMark = killedMark;
