import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isTestSets, runsFor, testSetProblems, type TestSets } from '../../experiments/mutation/testSets';

// The committed map of mutation test sets (experiments/mutation/testSets.json) and the runs it implies.
const root = path.resolve(__dirname, '..', '..');
const sets = (groups: TestSets['groups']): TestSets => ({ groups });

function committedMap(): TestSets {
  const parsed: unknown = JSON.parse(readFileSync(path.join(root, 'experiments', 'mutation', 'testSets.json'), 'utf8'));
  if (!isTestSets(parsed)) throw new Error('testSets.json is not a test-set map');
  return parsed;
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(path.join(root, dir)).filter((f) => f.endsWith('.ts')).map((f) => `${dir}/${f}`);
}

describe('the committed test-set map', () => {
  it('places every file Stryker mutates in exactly one group', () => {
    const map = committedMap();
    expect(testSetProblems(map)).toEqual([]);
    const mutated = [...sourcesUnder('src/domain'), ...sourcesUnder('src/verification'), ...sourcesUnder('src/tools')].filter((f) => f !== 'src/verification/verifyWorker.ts' && f !== 'src/verification/verifyThread.ts').sort();
    expect(map.groups.flatMap((g) => g.mutate).sort()).toEqual(mutated);
  });

  it('names only test files that exist', () => {
    for (const group of committedMap().groups) for (const test of group.tests) expect([group.name, test, existsSync(path.join(root, test))]).toEqual([group.name, test, true]);
  });
});

describe('testSetProblems', () => {
  it('names a file in two groups, a group without tests and a name used twice', () => {
    const problems = testSetProblems(sets([
      { name: 'a', mutate: ['x.ts'], tests: ['t'] },
      { name: 'b', mutate: ['x.ts'], tests: [] },
      { name: 'a', mutate: [], tests: ['t'] },
    ]));
    expect(problems).toEqual(['group b has no tests', 'x.ts is in groups a and b', 'group a is named twice']);
  });
});

describe('runsFor', () => {
  const map = sets([
    { name: 'a', mutate: ['a1.ts', 'a2.ts'], tests: ['ta'] },
    { name: 'empty', mutate: [], tests: ['te'] },
    { name: 'b', mutate: ['b1.ts'], tests: ['tb'] },
  ]);

  it('is one run per group that mutates anything when no files are given', () => {
    expect(runsFor(map)).toEqual([
      { name: 'a', mutate: ['a1.ts', 'a2.ts'], tests: ['ta'] },
      { name: 'b', mutate: ['b1.ts'], tests: ['tb'] },
    ]);
  });

  it('runs given files with their own group’s tests, one run per group', () => {
    expect(runsFor(map, ['b1.ts', 'a2.ts'])).toEqual([
      { name: 'a', mutate: ['a2.ts'], tests: ['ta'] },
      { name: 'b', mutate: ['b1.ts'], tests: ['tb'] },
    ]);
  });

  it('refuses a file no group holds', () => {
    expect(() => runsFor(map, ['a1.ts', 'c.ts'])).toThrow('no test group holds c.ts');
  });
});

describe('isTestSets', () => {
  it('accepts a map and refuses anything else', () => {
    expect(isTestSets({ groups: [{ name: 'a', mutate: [], tests: ['t'] }] })).toBe(true);
    expect(isTestSets({ groups: [{ name: 'a', mutate: [1], tests: [] }] })).toBe(false);
    expect(isTestSets({ groups: [{ name: 'a', tests: [] }] })).toBe(false);
    expect(isTestSets({ groups: {} })).toBe(false);
    expect(isTestSets(null)).toBe(false);
  });
});
