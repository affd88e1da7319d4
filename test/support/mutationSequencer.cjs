// Loaded only by mutation runs (stryker.config.json, jest.config.testSequencer); plain CommonJS
// because jest loads its sequencer without the TypeScript transform.
//
// Stryker runs a mutant with jest `--findRelatedTests <mutated file>` and a test-name filter: jest
// then loads every test file that imports the file, even those where no test reaches the mutant,
// and most of a run's time was loading them. During the dry run, mutationSetup.ts records which
// mutants each test file's tests reach (Stryker's own per-test coverage); here, during a mutant's
// run, only the files with a test that reaches it are kept. Those are exactly the files where
// Stryker's test filter matches a test, so the same tests run. A mutant no file recorded (reached
// only while modules load, where Stryker runs every test) keeps every file.
//
// The kept files run quickest first (by their time in the dry run): mutationEnvironment.cjs skips
// a mutant's remaining tests once one has failed, so the sooner a cheap file kills it, the less of
// the rest runs. Each mutant run starts here, which is also where that environment's mark is cleared.
const { readFileSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const { killedMark } = require('./mutationEnvironment.cjs');

let filesByMutant;
const msByFile = new Map();

function coverageMap() {
  if (filesByMutant !== undefined) return filesByMutant;
  filesByMutant = new Map();
  const file = process.env.ATC_MUTATION_COVERAGE_FILE;
  let text = '';
  try {
    text = file === undefined ? '' : readFileSync(file, 'utf8');
  } catch {
    text = '';
  }
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const { testFile, mutants, ms } = JSON.parse(line);
    if (typeof ms === 'number') msByFile.set(testFile, ms);
    for (const id of mutants) {
      const files = filesByMutant.get(id) ?? new Set();
      files.add(testFile);
      filesByMutant.set(id, files);
    }
  }
  return filesByMutant;
}

class MutationSequencer extends Sequencer {
  sort(tests) {
    const active = process.env.__STRYKER_ACTIVE_MUTANT__;
    delete process.env[killedMark];
    const sorted = super.sort(tests);
    if (active === undefined) return sorted;
    const files = coverageMap().get(active);
    const kept = files === undefined ? sorted : sorted.filter((test) => files.has(test.path));
    const ms = (test) => msByFile.get(test.path) ?? Number.MAX_SAFE_INTEGER;
    return [...kept].sort((a, b) => ms(a) - ms(b));
  }
}

module.exports = MutationSequencer;
