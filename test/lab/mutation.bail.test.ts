import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// Mutation runs skip a mutant's remaining tests once one has failed (test/support/mutationEnvironment.cjs)
// and run the files that reach it quickest first (test/support/mutationSequencer.cjs).

interface Event {
  readonly name: string;
  readonly test: { errors: unknown[]; mode?: string };
}
interface EnvironmentModule {
  readonly prototype: { handleTestEvent(event: Event): Promise<void> };
  readonly killedMark: string;
}
interface SequencerTest {
  readonly path: string;
  readonly context: { readonly config: { readonly cache: boolean; readonly rootDir: string }; readonly hasteFS: { getSize(): number } };
}
type SequencerClass = new () => { sort(tests: SequencerTest[]): SequencerTest[] };

const envKeys = ['__STRYKER_ACTIVE_MUTANT__', 'ATC_MUTATION_KILLED', 'ATC_MUTATION_COVERAGE_FILE'] as const;
let saved: Record<string, string | undefined>;
beforeEach(() => {
  saved = Object.fromEntries(envKeys.map((k) => [k, process.env[k]]));
  for (const k of envKeys) delete process.env[k];
});
afterEach(() => {
  for (const k of envKeys) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

function environment(): EnvironmentModule {
  let loaded: EnvironmentModule | undefined;
  jest.isolateModules(() => {
    loaded = require('../support/mutationEnvironment.cjs') as EnvironmentModule;
  });
  return loaded as EnvironmentModule;
}

function sequencer(): SequencerClass {
  let loaded: SequencerClass | undefined;
  jest.isolateModules(() => {
    loaded = require('../support/mutationSequencer.cjs') as SequencerClass;
  });
  return loaded as SequencerClass;
}

const handle = (event: Event): Promise<void> => environment().prototype.handleTestEvent.call({}, event);
const done = (failed: boolean): Event => ({ name: 'test_done', test: { errors: failed ? [new Error('x')] : [] } });
const start = (): Event & { test: { errors: unknown[]; mode?: string } } => ({ name: 'test_start', test: { errors: [] } });

describe('mutationEnvironment', () => {
  it('skips the tests that start after a test failed under the same active mutant', async () => {
    process.env.__STRYKER_ACTIVE_MUTANT__ = '7';
    await handle(done(true));
    const next = start();
    await handle(next);
    expect(next.test.mode).toBe('skip');
  });

  it('runs every test while no test has failed under the active mutant', async () => {
    process.env.__STRYKER_ACTIVE_MUTANT__ = '7';
    await handle(done(false));
    const next = start();
    await handle(next);
    expect(next.test.mode).toBeUndefined();
  });

  it('does not carry a kill over to another mutant', async () => {
    process.env.__STRYKER_ACTIVE_MUTANT__ = '7';
    await handle(done(true));
    process.env.__STRYKER_ACTIVE_MUTANT__ = '8';
    const next = start();
    await handle(next);
    expect(next.test.mode).toBeUndefined();
  });

  it('never skips outside a mutant run (the dry run, a plain jest run)', async () => {
    await handle(done(true));
    const next = start();
    await handle(next);
    expect(next.test.mode).toBeUndefined();
    expect(process.env.ATC_MUTATION_KILLED).toBeUndefined();
  });
});

describe('mutationSequencer', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'atc-sequencer-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const test = (file: string): SequencerTest => ({ path: path.join(dir, file), context: { config: { cache: false, rootDir: dir }, hasteFS: { getSize: () => 0 } } });
  function recorded(lines: readonly { testFile: string; mutants: string[]; ms: number }[]): void {
    const file = path.join(dir, 'coverage.jsonl');
    writeFileSync(file, lines.map((l) => `${JSON.stringify({ ...l, testFile: path.join(dir, l.testFile) })}\n`).join(''));
    process.env.ATC_MUTATION_COVERAGE_FILE = file;
  }

  it('keeps the files that reach the active mutant, quickest in the dry run first', () => {
    recorded([
      { testFile: 'slow.test.ts', mutants: ['3'], ms: 900 },
      { testFile: 'other.test.ts', mutants: ['4'], ms: 1 },
      { testFile: 'quick.test.ts', mutants: ['3'], ms: 20 },
    ]);
    process.env.__STRYKER_ACTIVE_MUTANT__ = '3';
    const Sequencer = sequencer();
    const order = new Sequencer().sort([test('slow.test.ts'), test('other.test.ts'), test('quick.test.ts')]).map((t) => path.basename(t.path));
    expect(order).toEqual(['quick.test.ts', 'slow.test.ts']);
  });

  it('clears the previous mutant run’s kill when a mutant run starts', () => {
    recorded([]);
    process.env.__STRYKER_ACTIVE_MUTANT__ = '3';
    process.env.ATC_MUTATION_KILLED = '3';
    const Sequencer = sequencer();
    new Sequencer().sort([test('a.test.ts')]);
    expect(process.env.ATC_MUTATION_KILLED).toBeUndefined();
  });

  it('keeps every file for a mutant that no file recorded', () => {
    recorded([{ testFile: 'a.test.ts', mutants: ['1'], ms: 5 }]);
    process.env.__STRYKER_ACTIVE_MUTANT__ = '9';
    const Sequencer = sequencer();
    expect(new Sequencer().sort([test('a.test.ts'), test('b.test.ts')]).map((t) => path.basename(t.path)).sort()).toEqual(['a.test.ts', 'b.test.ts']);
  });
});
