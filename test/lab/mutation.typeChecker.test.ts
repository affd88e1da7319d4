import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MutantTypeChecker, strykerPlugins, type CheckedMutant } from '../../experiments/mutation/typeChecker';

// The mutation runs' type checker (experiments/mutation/typeChecker.ts): a mutant is invalid when
// the project would no longer compile, in the mutated file or in any file that imports it.

const sources = {
  'limit.ts': 'export function over(x: number, limit: number) {\n  return x > limit;\n}\n',
  'use.ts': "import { over } from './limit';\nexport const flagged: boolean = over(2, 1);\n",
  'loose.ts': "import { over } from './limit';\nexport const shown = String(over(2, 1));\n",
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'atc-typechecker-'));
  for (const [name, text] of Object.entries(sources)) writeFileSync(path.join(dir, name), text);
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'commonjs', types: [] }, include: ['*.ts'] }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Starting a checker loads TypeScript's standard library (seconds): one per project, shared by the
// tests, which is also what a mutation run does (every check starts from the unmutated files).
const started = new Map<string, Promise<MutantTypeChecker>>();
function checker(tsconfig = 'tsconfig.json'): Promise<MutantTypeChecker> {
  const known = started.get(tsconfig);
  if (known !== undefined) return known;
  const c = new MutantTypeChecker({ tsconfigFile: path.join(dir, tsconfig) });
  const ready = c.init().then(() => c);
  started.set(tsconfig, ready);
  return ready;
}

// `x > limit` on line 1 (0-based), columns 9–18.
const onComparison = (id: string, replacement: string, file = 'limit.ts'): CheckedMutant => ({
  id,
  fileName: path.join(dir, file),
  replacement,
  location: { start: { line: 1, column: 9 }, end: { line: 1, column: 18 } },
});

describe('MutantTypeChecker', () => {
  it('passes a mutant that changes behaviour and still compiles', async () => {
    expect(await (await checker()).check([onComparison('1', 'x >= limit')])).toEqual({ '1': { status: 'passed' } });
  });

  it('refuses a mutant that does not compile in its own file, with the compiler message', async () => {
    const result = (await (await checker()).check([onComparison('2', 'x > undefinedName')]))['2'];
    expect(result?.status).toBe('compileError');
    expect(result?.status === 'compileError' ? result.reason : '').toContain('undefinedName');
  });

  it('refuses a mutant whose new declared type breaks a file that imports it', async () => {
    // over() now returns a string: limit.ts compiles, use.ts's `boolean` annotation does not.
    const result = (await (await checker()).check([onComparison('3', '"yes"')]))['3'];
    expect(result?.status).toBe('compileError');
    expect(result?.status === 'compileError' ? result.reason : '').toContain('use.ts');
  });

  it('passes a mutant whose new declared type every importer still accepts', async () => {
    const onlyLoose = path.join(dir, 'tsconfig.loose.json');
    writeFileSync(onlyLoose, JSON.stringify({ extends: './tsconfig.json', include: ['limit.ts', 'loose.ts'] }));
    expect(await (await checker('tsconfig.loose.json')).check([onComparison('4', '"yes"')])).toEqual({ '4': { status: 'passed' } });
  });

  it('checks each mutant of a group on the unmutated file, not on the one before', async () => {
    const c = new MutantTypeChecker({ tsconfigFile: path.join(dir, 'tsconfig.json') });
    await c.init();
    expect(await c.check([onComparison('5', 'x > undefinedName'), onComparison('6', 'x < limit')])).toEqual({
      '5': expect.objectContaining({ status: 'compileError' }),
      '6': { status: 'passed' },
    });
    expect(await c.check([onComparison('7', 'x <= limit')])).toEqual({ '7': { status: 'passed' } });
  });

  it('passes a mutant in a file outside the project', async () => {
    expect(await (await checker()).check([onComparison('8', 'x > undefinedName', 'elsewhere.ts')])).toEqual({ '8': { status: 'passed' } });
  });

  it('refuses to start on a project that does not compile unmutated', async () => {
    const broken = path.join(dir, 'tsconfig.broken.json');
    mkdirSync(path.join(dir, 'broken'), { recursive: true });
    writeFileSync(path.join(dir, 'broken', 'broken.ts'), 'export const n: number = "text";\n');
    writeFileSync(broken, JSON.stringify({ extends: './tsconfig.json', include: ['broken/broken.ts'] }));
    await expect(checker('tsconfig.broken.json')).rejects.toThrow(/does not type-check/);
  });

  it('declares itself to Stryker as the checker named in stryker.config.json', () => {
    expect(strykerPlugins).toEqual([{ kind: 'Checker', name: 'atc-typescript', injectableClass: MutantTypeChecker }]);
  });
});
