import fc from 'fast-check';

// Loaded only by mutation runs (stryker.config.json, jest.config.setupFilesAfterEnv). A property that
// fails kills the mutant at its first counterexample; shrinking it would only make the report nicer
// and cost up to thousands of further runs per killed mutant. Whether a mutant is killed is unchanged.
fc.configureGlobal({ endOnFailure: true });
