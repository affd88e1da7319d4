import { appendFileSync, readFileSync } from 'node:fs';

// Loaded only by mutation runs (stryker.config.json, jest.config.setupFilesAfterEnv).

// A property that fails kills the mutant at its first counterexample; shrinking it would only make
// the report nicer and cost up to thousands of further runs per killed mutant. Whether a mutant is
// killed is unchanged. Only for test files that use fast-check: loading it costs about as much as
// loading the decider, for every test file of every mutant run.
const testPath = expect.getState().testPath;
if (testPath !== undefined && readFileSync(testPath, 'utf8').includes("from 'fast-check'")) {
  // require, not import: the same module instance as the test file's, and only when it is used.
  (require('fast-check') as typeof import('fast-check')).configureGlobal({ endOnFailure: true });
}

// During Stryker's dry run (no active mutant), record which mutants this file's tests reach, from
// Stryker's own per-test coverage, for mutationSequencer.cjs to skip loading the other files.
interface StrykerContext {
  readonly mutantCoverage?: { readonly perTest?: Readonly<Record<string, Readonly<Record<string, number>>>> };
}
const coverageFile = process.env.ATC_MUTATION_COVERAGE_FILE;
if (coverageFile !== undefined && process.env.__STRYKER_ACTIVE_MUTANT__ === undefined) {
  const reached = new Set<string>();
  const startedAt = Date.now();
  afterEach(() => {
    const name = expect.getState().currentTestName;
    const context = (globalThis as { __stryker__?: StrykerContext }).__stryker__;
    const hits = name === undefined ? undefined : context?.mutantCoverage?.perTest?.[name];
    if (hits !== undefined) for (const id of Object.keys(hits)) reached.add(id);
  });
  afterAll(() => {
    if (testPath === undefined) return;
    appendFileSync(coverageFile, `${JSON.stringify({ testFile: testPath, mutants: [...reached], ms: Date.now() - startedAt })}\n`);
  });
}
