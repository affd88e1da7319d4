/**
 * The committed map of which tests may kill which core file's mutants (testSets.json), and the
 * Stryker runs it implies. Pure: main.ts reads the file.
 */

export interface TestGroup {
  readonly name: string;
  /** Source files, relative to the repository root. */
  readonly mutate: readonly string[];
  /** Test files (jest testMatch entries), relative to the repository root. */
  readonly tests: readonly string[];
}

export interface TestSets {
  readonly groups: readonly TestGroup[];
}

/** One Stryker run: these files mutated, these tests allowed to kill them. */
export interface TestRun {
  readonly name: string;
  readonly mutate: readonly string[];
  readonly tests: readonly string[];
}

const isStringList = (value: unknown): value is readonly string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

export function isTestSets(value: unknown): value is TestSets {
  if (typeof value !== 'object' || value === null || !('groups' in value) || !Array.isArray(value.groups)) return false;
  return value.groups.every(
    (g: unknown) => typeof g === 'object' && g !== null && 'name' in g && typeof g.name === 'string' && 'mutate' in g && isStringList(g.mutate) && 'tests' in g && isStringList(g.tests),
  );
}

/** Problems with the map itself: a file in two groups, a group without tests, a name used twice. */
export function testSetProblems(sets: TestSets): string[] {
  const problems: string[] = [];
  const owner = new Map<string, string>();
  const names = new Set<string>();
  for (const group of sets.groups) {
    if (names.has(group.name)) problems.push(`group ${group.name} is named twice`);
    names.add(group.name);
    if (group.tests.length === 0) problems.push(`group ${group.name} has no tests`);
    for (const file of group.mutate) {
      const first = owner.get(file);
      if (first !== undefined) problems.push(`${file} is in groups ${first} and ${group.name}`);
      else owner.set(file, group.name);
    }
  }
  return problems;
}

/**
 * The runs for `files` (every group's files when undefined): one per group that holds any of
 * them, in the map's order, with the group's tests. Throws on a file that no group holds, so
 * that no file is measured against tests nobody chose for it.
 */
export function runsFor(sets: TestSets, files?: readonly string[]): TestRun[] {
  if (files === undefined) return sets.groups.filter((g) => g.mutate.length > 0).map((g) => ({ name: g.name, mutate: g.mutate, tests: g.tests }));
  const unplaced = files.filter((f) => !sets.groups.some((g) => g.mutate.includes(f)));
  if (unplaced.length > 0) throw new Error(`no test group holds ${unplaced.join(', ')}: add it to experiments/mutation/testSets.json`);
  return sets.groups
    .map((g) => ({ name: g.name, mutate: g.mutate.filter((f) => files.includes(f)), tests: g.tests }))
    .filter((run) => run.mutate.length > 0);
}
