import fc from 'fast-check';
import { appendFileSync } from 'node:fs';

// Loaded only by mutation runs (stryker.config.json, jest.config.setupFilesAfterEnv).

// A property that fails kills the mutant at its first counterexample; shrinking it would only make
// the report nicer and cost up to thousands of further runs per killed mutant. Whether a mutant is
// killed is unchanged.
fc.configureGlobal({ endOnFailure: true });

// During Stryker's dry run (no active mutant), record which mutants this file's tests reach, from
// Stryker's own per-test coverage, for mutationSequencer.cjs to skip loading the other files.
interface StrykerContext {
  readonly mutantCoverage?: { readonly perTest?: Readonly<Record<string, Readonly<Record<string, number>>>> };
}
const coverageFile = process.env.ATC_MUTATION_COVERAGE_FILE;
if (coverageFile !== undefined && process.env.__STRYKER_ACTIVE_MUTANT__ === undefined) {
  const reached = new Set<string>();
  afterEach(() => {
    const name = expect.getState().currentTestName;
    const context = (globalThis as { __stryker__?: StrykerContext }).__stryker__;
    const hits = name === undefined ? undefined : context?.mutantCoverage?.perTest?.[name];
    if (hits !== undefined) for (const id of Object.keys(hits)) reached.add(id);
  });
  afterAll(() => {
    const testPath = expect.getState().testPath;
    if (testPath === undefined) return;
    appendFileSync(coverageFile, `${JSON.stringify({ testFile: testPath, mutants: [...reached] })}\n`);
  });
}
